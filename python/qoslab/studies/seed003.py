"""Seed 003 (003_17c68763cd72f496.txt): what 1, 2 or 3 simultaneous IPsec VPNs cost a
slow 802.11b client — throughput, loss each way, round-trip time and CPU against UDP
payload size and packet rate.

Design, from the seed's four examples (``seed003_ipsec_0vpn.toml``, ``_1vpn``, ``_2vpn``
and ``seed003_ipsec.toml``), whose ``udp.echo`` test (:mod:`qoslab.methods.echo`) runs
as ``qoslab run`` runs it, at each payload and gap: UDP echo (LanTraffic) of 10 000 datagrams
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

from qoslab.studies import (
    EXACT,
    EXAMPLES,
    Figure,
    Ours,
    PaperTable,
    Point,
    Published,
    Study,
    Tolerance,
    finish_axes,
    printed,
)

PAYLOADS = [25, 50, 150, 400, 600, 1000, 1200, 1400, 1438, 1439, 1472, 1473, 1600]
GAPS = {"1 ms": 1_000_000, "5 ms": 5_000_000}
PAYLOADS_AT = {"1 ms": [25, 50, 150, 400, 600, 1000, 1400, 1472, 1600], "5 ms": PAYLOADS}
"""At 1 ms the client is overloaded above ~600 bytes and each run simulates long queues, so
fewer payloads there keep ``qoslab reproduce`` within its 10 minutes; both knees are
found at 5 ms, where nothing is lost."""
VPNS = [0, 1, 2, 3]
COUNT = 10_000

THROUGHPUT_TOL = Tolerance(
    "echo throughput over 802.11b depends on the client's CPU, whose ESP cost is calibrated on one CPU point only; 15 %",
    rel=0.15,
)
LOSS_TOL = Tolerance(
    "loss of short datagrams at 1 ms depends on socket buffers and the adapter's processing, which the seed does not give; ±10 percentage points",
    abs=10.0,
)
CPU_TOL = Tolerance(
    "Windows 2000's Performance Monitor average; the model's per-packet costs are uncalibrated: ±5 percentage points",
    abs=5.0,
)
THROUGHPUT = "throughput_two_way_mbps"
"""The seed's "average throughput" (§4.1, Figs. 2-4): "the average amount of data payload
transferred over the time duration between two points in the same service area" [its
ref. 6]. In its echo set-up (§3, Fig. 1) payload is transferred between the two points
both ways, out and echoed back, and both cross the one 802.11b cell; the seed checks its
5.97 Mb/s baseline against published single-cell 802.11b UDP throughputs (its refs. 7
and 8), a cell's capacity, not half of one. The udp.echo method's
``throughput_two_way_mbps`` counts exactly that: UDP payload bits that reached the server
plus those echoed back, over the receiving interval (docs/metrics.md, udp.echo).
``throughput_mbps`` (the round trips completed, one way's payload) is half a cell and is
shown in the figure beside it."""
THROUGHPUT_WORDS = "payload carried both ways (out + echoed) over the receiving interval, the data the cell carried"


def payload_tol(step: int) -> Tolerance:
    """A payload read off the seed's graphs: the seed prints it to ``step`` bytes (150 to
    the 50, 400 and 600 to the hundred) and does not say its sweep's step; ours is a
    payload of our sweep, which holds 150, 400 and 600, so the rule asks for the same
    swept payload (docs/agreement.md; the former ±200 B had no basis in the paper)."""
    return printed("ours can only be a swept payload", step)


def _k(vpns: int, gap: str) -> str:
    return f"v{vpns}/{gap.replace(' ', '')}"


def _throughput_and_loss_rows() -> list[Published]:
    """§4.1-4.2: the throughputs, the largest unfragmented payloads and the losses the seed states."""
    return [
        Published(
            "max.base.1ms",
            "§4.1 / Fig. 2: highest average throughput, baseline (no VPN), 1 ms gap",
            5.97,
            "Mb/s",
            THROUGHPUT_TOL,
            source="§4.1",
        ),
        Published(
            "max.vpn1.1ms",
            "§4.1 / Fig. 2: highest average throughput, one IPsec VPN, 1 ms gap",
            4.94,
            "Mb/s",
            THROUGHPUT_TOL,
            source="§4.1",
        ),
        Published(
            "knee.base",
            "§4.1: largest UDP payload before fragmentation, baseline",
            1472,
            "bytes",
            EXACT,
            source="§4.1",
        ),
        Published(
            "knee.vpn",
            "§4.1: largest UDP payload before fragmentation, IPsec (ESP)",
            1438,
            "bytes",
            EXACT,
            source="§4.1",
        ),
        Published(
            "loss.tx.short",
            "§4.2 / Fig. 5: transmit (outbound) loss for 25-50-byte payloads at 1 ms, up to about",
            35.0,
            "%",
            LOSS_TOL,
            source="§4.2",
        ),
        Published(
            "loss.rx.short",
            "§4.2 / Fig. 6: receive (inbound) loss for 25-50-byte payloads at 1 ms, up to about",
            20.0,
            "%",
            LOSS_TOL,
            source="§4.2",
        ),
        Published(
            "loss.vpn_below_base",
            "§4.2 / Fig. 5: from this payload on, VPNs lose less than the baseline at 1 ms",
            400,
            "bytes",
            payload_tol(100),
            source="§4.2",
        ),
        Published(
            "fig3.small",
            "§4.1 / Fig. 3: up to this payload more VPNs give more total throughput (1 ms)",
            150,
            "bytes",
            payload_tol(50),
            source="§4.1",
        ),
    ]


def _knee_rows() -> list[Published]:
    """§4.1-4.2, Figs. 3, 4 and 8: the payloads where a curve turns."""
    return [
        Published(
            "fig4.slope",
            "§4.1 / Fig. 4: 3 VPNs' throughput slope drops from this payload (5 ms)",
            600,
            "bytes",
            payload_tol(100),
            source="§4.1",
        ),
        Published(
            "fig8.loss",
            "§4.2 / Fig. 8: 3 VPNs' inbound loss grows above this payload (5 ms)",
            600,
            "bytes",
            payload_tol(100),
            source="§4.2",
        ),
        Published(
            "cpu.max.1ms",
            "§4.3 / Fig. 9: highest average CPU utilisation, 1 ms",
            99.2,
            "%",
            CPU_TOL,
            source="§4.3",
            derived_from="cpu.3vpn.5ms.600",
            derived_how="the busiest client of the study: 1-3 VPNs at 1 ms send five times the datagrams of the 5 ms calibration point, so the calibrated ESP cost saturates its CPU",
        ),
    ]


def _cpu_rows() -> list[Published]:
    """§4.3, Figs. 9-10: the CPU utilisation of the VPN gateway."""
    return [
        Published(
            "cpu.3vpn.5ms.600",
            "§4.3 / Fig. 10: CPU, 3 VPNs, 600-byte payload, 5 ms: where '98% and over' begins (pentium-ii-300mhz's per_byte_esp is set on it)",
            98.0,
            "%",
            Tolerance("the calibration's bisection: ±1 percentage point", abs=1.0),
            calibrated=True,
            source="§4.3",
        ),
        Published(
            "cpu.3vpn.5ms.1200",
            "§4.3 / Fig. 10: CPU, 3 VPNs, 1200-byte payload, 5 ms",
            100.0,
            "%",
            CPU_TOL,
            source="§4.3",
            derived_from="cpu.3vpn.5ms.600",
            derived_how="twice the calibrated 600-byte ESP work at the same rate: the CPU is full",
        ),
        Published(
            "cpu.3vpn.5ms.1400",
            "§4.3 / Fig. 10: CPU, 3 VPNs, 1400-byte payload, 5 ms",
            100.0,
            "%",
            CPU_TOL,
            source="§4.3",
            derived_from="cpu.3vpn.5ms.600",
            derived_how="more than twice the calibrated 600-byte ESP work at the same rate: the CPU is full",
        ),
        Published(
            "cpu.3vpn.5ms.over600",
            "§4.3 / Fig. 10: lowest CPU, 3 VPNs, payloads over 600 bytes, 5 ms (98 % and over)",
            [98.0, 100.0],
            "%",
            Tolerance(
                "the paper gives a range, '98 % and over' (a CPU is at most 100 % busy); ours agrees inside it (the former 'at least 93 %' had no basis in the paper)"
            ),
            source="§4.3",
            derived_from="cpu.3vpn.5ms.600",
            derived_how="more ESP work per datagram than at the calibrated 600 bytes, at the same rate",
        ),
    ]


class Seed003(Study):
    seed = "003"
    title = "IPsec VPNs on a slow 802.11b client"
    paper = "K. S. Munasinghe and S. A. Shahrestani, Wireless VPNs: An Evaluation of QoS Metrics and Measures (University of Western Sydney)"
    question = "What do 1, 2 or 3 simultaneous IPsec VPNs cost a slow wireless client: throughput, loss each way, round-trip time and CPU, against payload size and packet rate?"
    scenarios = ["seed003_ipsec.toml"]

    def published(self) -> list[Published]:
        return _throughput_and_loss_rows() + _knee_rows() + _cpu_rows()

    def points(self, workdir: Path | None = None) -> list[Point]:
        points = []
        for gap in GAPS:
            for vpns in VPNS:
                key = _k(vpns, gap)

                def run(progress: Any, vpns: int = vpns, gap: str = gap) -> list[dict[str, Any]]:
                    return run_echo(vpns, GAPS[gap], progress, PAYLOADS_AT[gap])

                points.append(
                    Point(
                        key,
                        f"seed 003: {vpns} VPN(s), {gap} gap, {len(PAYLOADS_AT[gap])} payloads",
                        run,
                        spec={
                            "vpns": vpns,
                            "gap": gap,
                            "payloads": PAYLOADS_AT[gap],
                            "count": COUNT,
                            "example": (EXAMPLES / FAMILY[vpns]).read_text(),
                            "records": "udp.echo method",
                        },
                        weight=1 + vpns,
                    )
                )
        return points

    def ours(self, data: dict[str, list[dict[str, Any]]]) -> dict[str, Ours]:
        o: dict[str, Ours] = {}

        def series(vpns: int, gap: str) -> dict[int, dict[str, Any]]:
            return _series(data, vpns, gap)

        b1, v1 = series(0, "1 ms"), series(1, "1 ms")
        if b1:
            best = max(b1, key=lambda p: b1[p][THROUGHPUT])
            o["max.base.1ms"] = Ours(b1[best][THROUGHPUT], f"{THROUGHPUT_WORDS}, at {best} bytes")
        if _knee(data, 0) is not None:
            o["knee.base"] = Ours(
                _knee(data, 0),
                "largest payload whose datagram crossed the LAN in one frame (frames counted on the wired link)",
            )
        if v1:
            best = max(v1, key=lambda p: v1[p][THROUGHPUT])
            o["max.vpn1.1ms"] = Ours(v1[best][THROUGHPUT], f"{THROUGHPUT_WORDS}, at {best} bytes")
        if _knee(data, 1) is not None:
            o["knee.vpn"] = Ours(
                _knee(data, 1),
                "largest payload whose ESP datagram crossed the LAN in one frame (frames counted on the wired link)",
            )
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
        o |= _knees(data)
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
        styles = [
            dict(color="black", marker="o", linestyle="-"),
            dict(color="0.4", marker="s", linestyle="--"),
            dict(color="black", marker="^", linestyle=":"),
            dict(color="0.4", marker="D", linestyle="-."),
        ]
        for metric, ylabel, name, title, marks in (
            (
                THROUGHPUT,
                "total throughput, out + echoed (Mb/s)",
                "seed003_throughput",
                "How much do the VPNs carry? (Figs. 2 and 4)",
                {("1 ms", 0): 5.97, ("1 ms", 1): 4.94},
            ),
            ("cpu", "client CPU utilisation (%)", "seed003_cpu", "What do the VPNs cost the CPU? (Figs. 9 and 10)", {}),
        ):
            fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
            for ax, gap in zip(axes, GAPS):
                for v in VPNS:
                    recs = data.get(_k(v, gap), [])
                    per: dict[int, float] = {}
                    for r in recs:
                        p = r["parameters"]["payload_bytes"]
                        per[p] = (
                            r["metrics"][THROUGHPUT]
                            if metric == THROUGHPUT
                            else r["metrics"]["cpu_util_pct"].get("wireless", 0.0)
                        )
                    if per:
                        xs = sorted(per)
                        ax.plot(
                            xs,
                            [per[x] for x in xs],
                            label=f"{v} VPN{'s' if v != 1 else ''} (ours)" if v else "baseline (ours)",
                            **styles[v],
                        )
                for (g, v), y in marks.items():
                    if g == gap:
                        ax.axhline(y, color="0.3", linewidth=0.8, linestyle=(0, (2, 2)))
                        ax.annotate(
                            f"paper: {'baseline' if v == 0 else f'{v} VPN'} max {y} Mb/s",
                            (30, y),
                            fontsize=7,
                            va="bottom",
                        )
                if metric == "cpu" and gap == "5 ms":
                    ax.plot([1200, 1400], [100, 100], "k*", markersize=10, label="paper: 3 VPNs 100 %")
                if metric == "cpu" and gap == "1 ms":
                    ax.axhline(99.2, color="0.3", linewidth=0.8, linestyle=(0, (2, 2)))
                    ax.annotate("paper: highest 99.2 %", (30, 99.2), fontsize=7, va="bottom")
                for knee in (1438, 1472):
                    ax.axvline(knee, color="0.75", linewidth=0.8)
                finish_axes(ax, xlabel="UDP payload (bytes)", title=f"{gap} between datagrams", title_size=9)
            axes[0].set_ylabel(ylabel)
            fig.suptitle(title)
            fig.tight_layout()
            figs.append(
                Figure(
                    name,
                    title,
                    "Lines: ours (10 000 echoed datagrams per VPN, all VPNs at once). Grey verticals: the fragmentation knees at 1438 (ESP) and 1472 bytes. Marks: numbers the seed states in its text.",
                    fig,
                )
            )
        return figs

    def tables(self) -> list[PaperTable]:
        return []

    def discussion(self, rows: list[dict[str, Any]], data: dict[str, list[dict[str, Any]]]) -> list[str]:
        return [
            "Throughput is the seed's 'average amount of data payload transferred between two points' (§4.1): the udp.echo method's throughput_two_way_mbps, the UDP payload that crossed the cell either way (reaching the echo server, and echoed back) over the time the echoes took to return (count x gap, or longer when they queued behind a saturated CPU or cell), so a queue drained after the sending stopped does not count as capacity. The seed's 5.97 Mb/s baseline is a whole 802.11b cell's UDP capacity (it compares it with published single-cell figures, its refs. 7 and 8); the echoed payload alone (throughput_mbps) is half of that.",
            "The fragmentation knees come out of the bytes: 1472 bytes of UDP payload fill a 1500-byte IP MTU in clear, and 1438 with transport-mode ESP (3DES-CBC, HMAC-SHA1-96: 8 + 8 + pad8(1438 + 8 + 2) + 12 = 1496).",
            "The client's CPU is pentium-ii-300mhz: 3DES-CBC + HMAC-SHA1 at 435 cycles a byte of ESP, calibrated on Fig. 10's saturation onset (3 VPNs, 5 ms, 600 bytes, 98 %), with uncalibrated per-packet costs; every other CPU, throughput and loss row is a prediction of that one number. The streams are one per VPN, each at the gap: with three of them at 5 ms the 802.11b cell itself cannot carry the echoes of large payloads, which the seed's Fig. 7 (little outbound loss at 5 ms) does not show - the seed's streams may have shared the gap.",
            *_loss_paragraph(rows, data),
        ]


SOCKET_BUFFER_BYTES = 8192
"""Windows 2000's default socket buffers, each way: AFD's DefaultSendWindow and
DefaultReceiveWindow are 8192 bytes on a machine with more than 19 MB of memory
(Microsoft, "Windows Sockets and DNS Registry Parameters", AFD registry parameters:
"the number of receive bytes that AFD buffers on a connection before imposing flow
control", per socket with SO_RCVBUF / SO_SNDBUF). Used here only to say what they could
do to the seed's short datagrams; the model has no socket buffer."""


def _loss_paragraph(rows: list[dict[str, Any]], data: dict[str, list[dict[str, Any]]] | None = None) -> list[str]:
    """What the short-datagram loss rows say, from the numbers."""
    by = {r["key"]: r for r in rows}
    tx, rx = by.get("loss.tx.short"), by.get("loss.rx.short")
    if not tx or tx["ours"] is None or not rx or rx["ours"] is None:
        return []
    out = [
        f"Short datagrams at 1 ms: the seed saw up to about 35 % lost on the way out and 20 % on the way back (§4.2), with outbound datagrams dropped by 'buffer overflows before reaching the interface'. "
        f"The model loses up to {tx['ours']:.0f} % on the way out and {rx['ours']:.0f} % on the way back. Its outbound drops are at the client's 802.11 transmit queue (the drop log: '802.11 transmit queue full'): "
        "DCF shares the cell between the client and the AP that carries the echoes, so the client gets less air than it offers and its queue overflows - the seed's 'before reaching the interface'."
    ]
    if data:
        short = {v: _series(data, v, "1 ms") for v in VPNS}
        tx25 = {v: s[25]["loss_tx"] for v, s in short.items() if 25 in s and s[25]["loss_tx"] is not None}
        cpu_short = [s[p]["cpu"] for s in short.values() for p in (25, 50) if p in s and s[p]["cpu"] is not None]
        if tx25:
            out.append(
                "Per set-up at 25 bytes, outbound: "
                + ", ".join(f"{v} VPN(s) {x:.1f} %" for v, x in sorted(tx25.items()))
                + ". "
                "The row's highest is the three VPNs', whose three streams each 1 ms apart offer the cell three times the baseline's datagrams; "
                "the client's queue is 1000 frames (Linux's txqueuelen: the seed's Windows 2000 driver's is not known), which holds the first seconds of each 10 000-datagram run, "
                "so a driver queue of tens of frames loses more (its steady-state share: try `queue = { wireless = 20 }` on the wlan link). What would settle the row: the adapter driver's transmit queue, and whether the seed's VPNs each sent a stream at the gap or shared one."
            )
        if cpu_short:
            per = SOCKET_BUFFER_BYTES // 25
            out.append(
                f"Socket buffers do not explain it in the model: Windows 2000's are {SOCKET_BUFFER_BYTES} bytes each way (AFD's DefaultSendWindow / DefaultReceiveWindow); a full send buffer holds the sender back (flow control) rather than dropping, "
                f"and the receive buffer ({per} echoes of 25 bytes) fills only when the application cannot read, while the client's CPU is at most {max(cpu_short):.0f} % busy at 25-50 bytes. "
                "The seed's 20 % inbound loss needs what its other explanation names (the adapter's per-frame processing of continuous short frames, §4.2), which the model does not have."
            )
        v3 = _series(data, 3, "5 ms")
        lossy = [p for p in sorted(v3) if (v3[p]["loss_tx"] or 0) > 5.0]
        if lossy:
            out.append(
                f"At 5 ms the seed's Fig. 7 shows 'minimal outbound packet loss', but three VPNs in the model lose {v3[lossy[0]]['loss_tx']:.0f} % outbound from {lossy[0]} bytes on: three streams 5 ms apart each fill the 802.11b cell with echoes. "
                "The knees of Figs. 4 and 8 (3 VPNs, 5 ms) then follow the cell's saturation, not the CPU's, which is why they come earlier than the seed's 600 bytes."
            )
    out.append(
        "Four rows read a knee off a curve (where VPNs start to lose less than the baseline, Fig. 3's crossing, Fig. 4's slope, Fig. 8's loss growth); each rule is written beside its value (studies/seed003.py _knees), on the swept payloads only, so ours moves in the sweep's steps."
    )
    return out


def _series(data: dict[str, list[dict[str, Any]]], vpns: int, gap: str) -> dict[int, dict[str, Any]]:
    """payload -> totals over the VPNs' streams: throughput, loss each way, cpu."""
    out: dict[int, dict[str, Any]] = {}
    for r in data.get(_k(vpns, gap), []):
        m = r["metrics"]
        out[r["parameters"]["payload_bytes"]] = {
            "throughput_mbps": m["throughput_mbps"],
            "throughput_two_way_mbps": m["throughput_two_way_mbps"],
            "loss_tx": m["loss_forward_pct"],
            "loss_rx": m["loss_reverse_pct"],
            "loss": m["loss_pct"],
            "cpu": m["cpu_util_pct"].get("wireless"),
        }
    return out


def _knees(data: dict[str, list[dict[str, Any]]]) -> dict[str, Ours]:
    """The four rows that read a knee off a curve, each by the rule in its note."""
    o: dict[str, Ours] = {}
    one = {v: _series(data, v, "1 ms") for v in VPNS}
    if all(one.values()):
        common = sorted(set.intersection(*(set(s) for s in one.values())))
        below = [p for p in common if all((one[v][p]["loss"] or 0) < (one[0][p]["loss"] or 0) for v in (1, 2, 3))]
        tail = [p for i, p in enumerate(common) if all(q in below for q in common[i:])]
        if tail:
            o["loss.vpn_below_base"] = Ours(
                tail[0],
                "smallest payload from which on every swept payload 1, 2 and 3 VPNs all lose fewer round trips than the baseline (1 ms)",
            )
        else:
            o["loss.vpn_below_base"] = Ours(
                None,
                "no swept payload from which on 1, 2 and 3 VPNs all lose fewer round trips than the baseline at 1 ms: in the model the VPNs' CPU cost adds loss rather than pacing the sender",
            )
        ordered = [p for p in common if one[1][p][THROUGHPUT] < one[2][p][THROUGHPUT] < one[3][p][THROUGHPUT]]
        head = [p for i, p in enumerate(common) if all(q in ordered for q in common[: i + 1])]
        if head:
            o["fig3.small"] = Ours(
                head[-1],
                "largest payload up to which every swept payload has 3 VPNs > 2 > 1 in total echoed throughput (1 ms)",
            )
        else:
            p0 = common[0] if common else None
            carried = [one[v][p0][THROUGHPUT] for v in (1, 2, 3)] if p0 is not None else []
            totals = ", ".join(f"{v} VPN(s) {x:.3f}" for v, x in zip((1, 2, 3), carried))
            why = (
                " The totals are within 1 % of each other: the 802.11b cell carries as many short frames as it can whatever the number of streams, so extra streams add loss at the client's transmit queue, not throughput"
                if carried and max(carried) > 0 and (max(carried) - min(carried)) / max(carried) < 0.01
                else ""
            )
            o["fig3.small"] = Ours(
                None,
                f"at the smallest swept payload ({p0} bytes) 3 VPNs do not carry more than 2 and 2 more than 1 (1 ms; Mb/s out + echoed: {totals}): the rule finds no range.{why}",
            )
    v3 = _series(data, 3, "5 ms")
    xs = sorted(v3)
    if len(xs) >= 3:
        slopes = [(v3[b][THROUGHPUT] - v3[a][THROUGHPUT]) / (b - a) for a, b in zip(xs, xs[1:])]
        first = slopes[0]
        drop = next((xs[i] for i, sl in enumerate(slopes) if first > 0 and sl < 0.5 * first), None)
        if drop is None:
            o["fig4.slope"] = Ours(
                None,
                "3 VPNs at 5 ms: the throughput's slope never falls below half its initial slope over the swept payloads",
            )
        else:
            o["fig4.slope"] = Ours(
                drop,
                "3 VPNs at 5 ms: first payload after which the throughput's slope falls below half its slope at the smallest payloads",
            )
        grows = next((p for p in xs if (v3[p]["loss_rx"] or 0) > 1.0), None)
        if grows is None:
            o["fig8.loss"] = Ours(None, "3 VPNs at 5 ms: the inbound loss stays under 1 % at every swept payload")
        else:
            prev = max((q for q in xs if q < grows), default=grows)
            o["fig8.loss"] = Ours(prev, "3 VPNs at 5 ms: largest payload before the inbound loss first exceeds 1 %")
    return o


def _knee(data: dict[str, list[dict[str, Any]]], vpns: int) -> int | None:
    """The largest payload whose datagrams crossed in one frame each, as counted on the
    wired link (``frames_per_datagram``), at 5 ms where nothing is lost."""
    best = None
    for r in data.get(_k(vpns, "5 ms"), []):
        p = r["parameters"]["payload_bytes"]
        if r["metrics"].get("frames_per_datagram") == 1 and (best is None or p > best):
            best = p
    return best


FAMILY = {
    0: "seed003_ipsec_0vpn.toml",
    1: "seed003_ipsec_1vpn.toml",
    2: "seed003_ipsec_2vpn.toml",
    3: "seed003_ipsec.toml",
}
"""The seed's four set-ups, one example each (0 = the baseline without IPsec)."""


def run_echo(vpns: int, gap_ns: int, progress: Any, payloads: list[int] = PAYLOADS) -> list[dict[str, Any]]:
    """The payload sweep for ``vpns`` VPNs (0 = baseline): the example's ``udp.echo`` test
    (one stream per VPN, all at once) run as ``qoslab run`` runs it, at each payload with
    ``COUNT`` datagrams ``gap_ns`` apart. Each record gains ``frames_per_datagram``:
    frames on the wired link towards the server per datagram that reached it (the
    learning ping and ARP add a few frames, negligible against 10 000 datagrams)."""
    from qoslab.scenario import load_scenario
    from qoslab.sweep import run_sweep, scenario_at

    path = EXAMPLES / FAMILY[vpns]
    base = load_scenario(path)
    records = []
    for payload in payloads:
        progress(f"{vpns} VPN(s), {gap_ns / 1e6:g} ms gap: {payload}-byte payloads, {max(1, vpns)} × {COUNT} echoes")
        sc = scenario_at(
            base, {"test[0].payload": payload, "test[0].gap": f"{gap_ns} ns", "test[0].count": COUNT}, source=path
        )
        (point,) = run_sweep(sc, source=path, jobs=1)
        run = point.runs[0]
        lan = next(x for x in run.results.links if x.name == "lan")
        for rec in run.records:
            forwarded = rec["metrics"]["forward_received"]
            rec = dict(
                rec,
                parameters=dict(rec["parameters"], vpns=vpns),
                metrics=dict(
                    rec["metrics"], frames_per_datagram=round(lan.frames[0] / forwarded) if forwarded else None
                ),
            )
            records.append(rec)
    return records


__all__ = ["Seed003"]
