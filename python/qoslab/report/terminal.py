"""A run as a network engineer reads it in a terminal: flows, links, CPUs, tables, drops.

Everything here prints to a :class:`rich.console.Console` (the CLI's is on stderr, so
``--json`` output on stdout stays clean).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from qoslab.plan.results_models import BridgeEntry, NodeResult, Results, TableEntry

METRICS_DOC = "docs/metrics.md"
"""Where every printed metric is defined; each table's caption points to its section."""

MAX_DROP_LINES = 12
"""Drop-log lines shown per run; the counts per reason are always complete."""


def _num(value: float | int | None, fmt: str = "{:.3f}") -> str:
    return "–" if value is None else fmt.format(value)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100.0 * value:.1f} %"


def _record_or_raw(metrics: dict[str, Any], key: str, raw: Any) -> Any:
    """The record's metric ``key`` where the method wrote one (its definition wins), else
    the value read straight from the core's results."""
    return metrics[key] if key in metrics else raw


def flows_table(results: Results, records_by_flow: dict[int, dict[str, Any]], labels: dict[int, str]) -> Table:
    """One row per flow: counts, throughput, latency (UDP, one way) or RTT (ping), jitter.

    A flow that belongs to a record prints the record's values (the method computed
    them once: the same numbers as ``--json`` and the records); a flow without one (a
    learning ping, an RFC 2544 search's last trial) prints the simulator's own counts,
    and for UDP the payload rate the simulator measured."""
    table = Table(
        box=box.SIMPLE_HEAD,
        title="Flows (times in ms: latency one way for UDP, round trip for ping and UDP echo)",
        title_justify="left",
        pad_edge=False,
        collapse_padding=True,
        caption=f"definitions: {METRICS_DOC}#flows",
        caption_justify="left",
    )
    table.add_column("flow", no_wrap=True)
    for col in ("sent", "recv", "lost", "loss%", "Mb/s", "latency mean/p99", "jitter"):
        table.add_column(col, justify="right", min_width=15 if col.startswith("lat") else None)
    for f in results.flows:
        fid = f.id
        record = records_by_flow.get(fid) or {}
        metrics = record.get("metrics", {})
        kind = f.kind
        pick = functools.partial(_record_or_raw, metrics)
        sent, received = pick("sent", f.sent), pick("received", f.received)
        lost = pick("lost", f.lost)
        loss_pct = pick("loss_pct", 100.0 * lost / sent if sent else None)
        loss = _num(loss_pct, "{:.2f}")
        jitter_ms = pick("jitter_ms", f.jitter_ns and f.jitter_ns / 1e6)
        if kind == "ping":
            rtts = f.rtt_ns
            mean = pick("rtt_mean_ms", sum(rtts) / len(rtts) / 1e6 if rtts else None)
            lat = f"rtt {mean:.3f}" if mean is not None else "–"
            tput = "–"
        elif kind == "tcp":
            # One stream's sender and receiver over its measurement window, as its
            # record says (methods/tcp.py computes them once): data octets sent
            # (retransmissions included) and received in order, and the goodput.
            from qoslab.methods.tcp import _stream_summary

            stream = next((x for x in record.get("streams") or [] if x["id"] == fid), None) or _stream_summary(f)
            sent, received = stream["sender"]["bytes_sent"], stream["receiver"]["bytes"]
            lost, loss = 0, "–"
            bps = stream["receiver"]["bits_per_second"]
            tput = _num(None if bps is None else bps / 1e6)
            lat = "–"
        else:
            lat_ns = f.latency_ns
            echo = kind == "udp-echo"
            mean = pick(
                "rtt_mean_ms" if echo else "latency_ms", None if lat_ns is None else lat_ns.mean and lat_ns.mean / 1e6
            )
            p99 = pick(
                "rtt_p99_ms" if echo else "latency_p99_ms", None if lat_ns is None else lat_ns.p99 and lat_ns.p99 / 1e6
            )
            lat = f"{_num(mean)} / {_num(p99)}" if lat_ns is not None or mean is not None else "–"
            if lat != "–" and echo:
                lat = f"rtt {lat}"  # an echo's send time comes back with it: a round trip
            tput = _num(pick("throughput_mbps", f.throughput_bps / 1e6))
        label = f"{f.kind} {labels.get(fid, str(fid))}"
        table.add_row(escape(label), str(sent), str(received), str(lost), loss, tput, lat, _num(jitter_ms))
    return table


def tcp_path_table(results: Results, labels: dict[int, str]) -> Table | None:
    """Per TCP flow: the path MTU and MSS its sender ended at, the ICMP "fragmentation
    needed" it accepted, black holes its MTU probing found, and the longest stall."""
    table = Table(
        box=box.SIMPLE_HEAD,
        title="TCP path MTU (RFC 1191 / RFC 4821)",
        title_justify="left",
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("flow", no_wrap=True)
    for col in ("path MTU", "MSS", "frag-needed rcvd", "black holes", "probes (failed)", "longest stall s", "done"):
        table.add_column(col, justify="right")
    rows = 0
    for f in results.flows:
        tcp = f.tcp
        if f.kind != "tcp" or tcp is None:
            continue
        from qoslab.methods.tcp import is_stalled

        done = "yes" if tcp.completed_ns is not None else ("[red]stalled[/]" if is_stalled(tcp) else "–")
        table.add_row(
            escape(f"tcp {labels.get(f.id, str(f.id))}"),
            str(tcp.path_mtu_bytes),
            str(tcp.mss_bytes),
            str(tcp.frag_needed_received),
            str(tcp.black_holes_detected),
            f"{tcp.mtu_probes} ({tcp.mtu_probes_failed})",
            f"{tcp.longest_stall_ns / 1e9:.3f}",
            done,
        )
        rows += 1
    return table if rows else None


def _bytes(n: float | int | None) -> str:
    """SI decimal units (docs/metrics.md): 1 kB = 1000 bytes, 1 MB = 10^6 bytes."""
    if n is None:
        return "–"
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} Bytes"


def _bits(bps: float | None) -> str:
    """iperf3's units: 1 Mbit = 10^6 bits."""
    if bps is None:
        return "–"
    for unit, size in (("Gbits/sec", 1e9), ("Mbits/sec", 1e6), ("Kbits/sec", 1e3)):
        if abs(bps) >= size:
            return f"{bps / size:.2f} {unit}"
    return f"{bps:.0f} bits/sec"


def _mb(n: int | None) -> str:
    return "–" if n is None else f"{n / 1e6:.3f}"


def _kb(n: int | None) -> str:
    return "–" if n is None else f"{n / 1e3:.1f}"


def _mbit(bps: float | None) -> str:
    return "–" if bps is None else f"{bps / 1e6:.2f}"


def _add_interval_rows(table: Table, intervals: list[dict[str, Any]]) -> None:
    """iperf3's interval lines: each stream's, and their SUM with more than one."""
    for iv in intervals:
        for st in iv["streams"]:
            table.add_row(
                str(st["id"]),
                f"{st['start_s']:.2f}-{st['end_s']:.2f}",
                _mb(st["bytes"]),
                _mbit(st["bits_per_second"]),
                str(st["retransmits"]),
                _kb(st["snd_cwnd_bytes"]),
                _num(st["rtt_ms"], "{:.1f}"),
            )
        if len(iv["streams"]) > 1:
            su = iv["sum"]
            table.add_row(
                "SUM",
                f"{su['start_s']:.2f}-{su['end_s']:.2f}",
                _mb(su["bytes"]),
                _mbit(su["bits_per_second"]),
                str(su["retransmits"]),
                "",
                "",
            )


def _ttcp_lines(console: Console, record: dict[str, Any]) -> None:
    """A sized transfer as ttcp prints it: the transmitter's line and the receiver's."""
    m = record.get("metrics") or {}
    n = record["parameters"].get("bytes")
    if m.get("completed"):
        console.print(
            f"ttcp-t: {n} bytes in {m['sender_time_s']:.3f} real seconds = {_bits((m['sender_rate_mbps'] or 0) * 1e6)} (first byte sent to last acknowledged)"
        )
        console.print(
            f"ttcp-r: {n} bytes in {m['receiver_time_s']:.3f} real seconds = {_bits((m['receiver_rate_mbps'] or 0) * 1e6)} "
            f"(first byte received to last; the {m['receiver_bytes_timed']} bytes after the first arrival)"
        )
    else:
        console.print(f"[red]the transfer of {n} bytes did not complete[/]: {m.get('bytes_received')} bytes arrived")


def tcp_report(console: Console, record: dict[str, Any]) -> None:
    """A TCP test as iperf3 prints it: each interval per stream (and SUM with more
    than one), then each stream's sender and receiver totals over the measurement
    window (and what arrived after it); or ttcp's two lines. SI decimal units
    throughout, said in the header: MB of 10^6 bytes, kB of 1000 (not iperf3's binary
    MBytes), rates in Mbit/s of 10^6 bits."""
    streams = record.get("streams") or []
    table = Table(
        box=box.SIMPLE_HEAD,
        title=f"TCP {escape(record['test'])} {escape(record['from'])} → {escape(record['to'])}",
        title_justify="left",
        pad_edge=False,
        caption="over the measurement window; definitions: docs/metrics.md, TCP",
        caption_justify="left",
    )
    for col in ("ID", "interval s", "MB (10^6 B)", "Mbit/s", "retr", "cwnd kB (10^3 B)", "srtt ms"):
        table.add_column(col, justify="left" if col in ("ID", "interval s") else "right", no_wrap=True)

    _add_interval_rows(table, record.get("intervals") or [])
    if record.get("intervals"):
        table.add_section()
    for st in streams:
        snd, rcv = st["sender"], st["receiver"]
        table.add_row(
            str(st["id"]),
            "sender",
            _mb(snd["bytes"]),
            _mbit(snd["bits_per_second"]),
            str(snd["retransmits"]),
            "max " + _kb(snd["max_snd_cwnd_bytes"]),
            "mean " + _num(snd["mean_rtt_ms"], "{:.1f}"),
        )
        table.add_row(str(st["id"]), "receiver", _mb(rcv["bytes"]), _mbit(rcv["bits_per_second"]), "", "", "")
    console.print(table)
    for st in streams:
        after = st["receiver"].get("bytes_after_stop")
        if after:
            console.print(
                f"stream {st['id']}: {_mb(after)} MB more arrived after the stop (the queues draining), not counted above"
            )
    if record["test"] == "tcp.transfer":
        _ttcp_lines(console, record)
    for st in streams:
        exit_ = st["sender"].get("hystart_exit")
        if exit_:
            console.print(
                f"stream {st['id']}: HyStart ({record['parameters'].get('hystart')}) left slow start at {exit_['time_ns'] / 1e9:.3f} s, cwnd {_bytes(exit_['cwnd_bytes'])} ({exit_['reason']})"
            )


MANY_ROWS = 50
"""A links or nodes table longer than this (a switch of 10,000 hosts) lists only its
rows that show something: those that would print as idle (0.0 % busy, no drop) are
counted in the caption instead (``--json`` keeps every one)."""


def _quiet_caption(table: Table, quiet: int, what: str) -> None:
    if quiet:
        table.caption = f"{quiet:,} {what} with nothing to show (0.0 %, no drops) not listed; --json has every one"
        table.caption_justify = "left"
        table.min_width = len(table.caption)


def links_table(results: Results) -> Table:
    """Utilisation of each Ethernet direction and each wifi cell's airtime; drops."""
    table = Table(
        box=box.SIMPLE_HEAD,
        title="Links",
        title_justify="left",
        caption=f"definitions: {METRICS_DOC}#link-use",
        caption_justify="left",
    )
    for col in ("link", "type", "utilisation", "drops"):
        table.add_column(col, justify="right" if col in ("drops",) else "left")
    links = results.links
    quiet = 0
    for link in links:
        u = link.utilization
        if link.type == "wifi":
            util = f"airtime busy {_pct(u[0] if u else None)}"
        else:
            util = f"a→b {_pct(u[0] if u else None)}, b→a {_pct(u[1] if len(u) > 1 else None)}"
        if len(links) > MANY_ROWS and not link.drops and all(_pct(v) == _pct(0.0) for v in u):
            quiet += 1
            continue
        table.add_row(escape(link.name), link.type, util, str(link.drops))
    _quiet_caption(table, quiet, "links")
    return table


def nodes_table(results: Results, profiles: dict[str, str]) -> Table:
    """Per node: the CPU profile, its utilisation over the run (and over the test's
    traffic when the run measured that), CPU drops, drops by reason."""
    windowed = any(n.cpu_utilization_window is not None for n in results.nodes)
    table = Table(
        box=box.SIMPLE_HEAD,
        title="Nodes",
        title_justify="left",
        caption=f"definitions: {METRICS_DOC}#cpu-busy, {METRICS_DOC}#drops-by-reason",
        caption_justify="left",
    )
    cols = (
        "node",
        "cpu",
        "cpu busy",
        *(("cpu (test)",) if windowed else ()),
        "cpu drops",
        "frag-needed sent",
        "drops by reason",
    )
    for col in cols:
        table.add_column(col, justify="right" if col.startswith("cpu ") or col == "frag-needed sent" else "left")
    nodes = results.nodes
    quiet = 0
    for node in nodes:
        drops = node.drops
        reasons = "; ".join(f"{n} × {escape(r)}" for r, n in sorted(drops.items(), key=lambda kv: -kv[1])) or "–"
        window = (_pct(node.cpu_utilization_window),) if windowed else ()
        icmp = str(node.frag_needed_sent) + (f" ({node.frag_needed_silent} silent)" if node.frag_needed_silent else "")
        busy = (node.cpu_utilization, node.cpu_utilization_window)
        if (
            len(nodes) > MANY_ROWS
            and not drops
            and not node.cpu_drops
            and icmp == "0"
            and all(v is None or _pct(v) == _pct(0.0) for v in busy)
        ):
            quiet += 1
            continue
        table.add_row(
            escape(node.name),
            escape(profiles.get(node.name, "?")),
            _pct(node.cpu_utilization),
            *window,
            str(node.cpu_drops),
            icmp,
            reasons,
        )
    _quiet_caption(table, quiet, "nodes")
    return table


def ipsec_table(results: Results) -> Table | None:
    """Per IPsec tunnel end: SPIs and what its SAs sealed and opened (packets, bytes)."""
    table = Table(
        box=box.SIMPLE_HEAD, title="IPsec tunnels (SPIs in hex; bytes after the IPv4 header)", title_justify="left"
    )
    for col in ("node", "tunnel", "SPI out/in", "sealed", "bytes", "opened", "bytes", "failed"):
        table.add_column(col, justify="left" if col in ("node", "tunnel") else "right")
    rows = 0
    for node in results.nodes:
        for sa in node.ipsec:
            table.add_row(
                escape(node.name),
                escape(sa.name),
                f"{sa.spi_out:x}/{sa.spi_in:x}",
                str(sa.sealed_packets),
                str(sa.sealed_bytes),
                str(sa.opened_packets),
                str(sa.opened_bytes),
                str(sa.failed),
            )
            rows += 1
    return table if rows else None


def _entries_table(
    title: str,
    results: Results,
    entries: Callable[[NodeResult], list[TableEntry] | list[BridgeEntry]],
    columns: tuple[str, ...],
) -> Table | None:
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left")
    table.add_column("node")
    for col in columns:
        table.add_column(col.upper() if col in ("ip", "mac") else col)
    rows = 0
    for node in results.nodes:
        for row in entries(node):
            table.add_row(escape(node.name), *(escape(str(getattr(row, c))) for c in columns))
            rows += 1
    return table if rows else None


def tables(console: Console, results: Results) -> None:
    """Every node's ARP table, then the L3F and bridge tables (seed 000 Tables 2 and 3, Fig. 6)."""
    kinds: tuple[tuple[str, Callable[[NodeResult], list[TableEntry] | list[BridgeEntry]], tuple[str, ...]], ...] = (
        ("ARP tables", lambda n: n.arp_table, ("ip", "mac", "port")),
        ("L3F tables", lambda n: n.l3f_table, ("ip", "mac", "port")),
        ("Bridge tables", lambda n: n.bridge_table, ("mac", "port")),
    )
    for title, entries, columns in kinds:
        table = _entries_table(title, results, entries, columns)
        if table is not None:
            console.print(table)


def drop_log(console: Console, results: Results, labels: dict[int, str]) -> None:
    """The first drops of the run, each with where and why."""
    log = results.drop_log
    if not log:
        return
    console.print(f"[bold]Drops[/] ({len(log)} logged; the first {min(len(log), MAX_DROP_LINES)}):")
    for d in log[:MAX_DROP_LINES]:
        where = d.node + (f"/{d.port}" if d.port else "")
        flow = f" flow {labels.get(d.flow, d.flow)}" if d.flow is not None else ""
        console.print(
            f"  {d.time_ns / 1e6:10.3f} ms  {escape(where)}{escape(flow)}: {escape(d.reason)}"
            + (f" — {escape(d.summary)}" if d.summary else "")
        )


def atm_summary(console: Console, results: Results) -> None:
    """The ATM network's counters: cells, losses at the switches, AAL5 frames lost, SVCs."""
    atm = results.atm
    if atm is None:
        return
    cells = sum(sum(c) for c in atm.cells)
    lost = sum(atm.cells_lost) + sum(atm.epd_cells) + sum(atm.ppd_cells)
    setups = atm.svc_setup_ns
    svc = f"{atm.svc_setups} SVCs set up" + (f" (mean {sum(setups) / len(setups) / 1e6:.3f} ms)" if setups else "")
    console.print(
        f"[bold]ATM[/]: {cells} cells sent, {lost} discarded at switches (queue full, EPD, PPD); "
        f"{atm.frames_received} of {atm.frames_sent} AAL5 frames reassembled, {atm.frames_corrupt} discarded (cells lost); "
        f"{svc}; {atm.atmarp_requests} ATMARP, {atm.inatmarp_requests} InATMARP requests"
    )


RFC2544_COLUMNS: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    # method: (title, [(header, "parameters"/"metrics", key)])
    "rfc2544.throughput": (
        "RFC 2544 §26.1 throughput: the highest rate with no frame loss, per frame size",
        [
            ("frame B", "parameters", "frame_bytes"),
            ("trial s", "parameters", "duration_s"),
            ("wait s", "parameters", "wait_s"),
            ("max fps", "parameters", "max_fps"),
            ("bottleneck fps", "parameters", "bottleneck_fps"),
            ("throughput fps", "metrics", "throughput_fps"),
            ("Mb/s", "metrics", "throughput_mbps"),
            ("% of max", "metrics", "throughput_pct"),
            ("latency ms", "metrics", "latency_ms"),
            ("trials", "metrics", "trials"),
        ],
    ),
    "rfc2544.latency": (
        "RFC 2544 §26.2 latency: the mean of the tagged frames over the trials",
        [
            ("frame B", "parameters", "frame_bytes"),
            ("trial s", "parameters", "duration_s"),
            ("wait s", "parameters", "wait_s"),
            ("offered fps", "parameters", "offered_fps"),
            ("Mb/s", "parameters", "offered_mbps"),
            ("latency ms", "metrics", "latency_ms"),
            ("min", "metrics", "latency_min_ms"),
            ("max", "metrics", "latency_max_ms"),
            ("reverse ms", "metrics", "latency_reverse_ms"),
            ("tags lost", "metrics", "tagged_lost"),
            ("trials", "metrics", "trials"),
        ],
    ),
    "rfc2544.frame_loss": (
        "RFC 2544 §26.3 frame loss rate: from 100 % of the medium's rate down, until two trials lose nothing",
        [
            ("frame B", "parameters", "frame_bytes"),
            ("trial s", "parameters", "duration_s"),
            ("wait s", "parameters", "wait_s"),
            ("load %", "parameters", "load_pct"),
            ("offered fps", "parameters", "offered_fps"),
            ("Mb/s", "parameters", "offered_mbps"),
            ("sent", "metrics", "sent"),
            ("lost", "metrics", "lost"),
            ("loss %", "metrics", "frame_loss_pct"),
        ],
    ),
    "rfc2544.back_to_back": (
        "RFC 2544 §26.4 back-to-back: the longest burst at the medium's rate with no loss",
        [
            ("frame B", "parameters", "frame_bytes"),
            ("wait s", "parameters", "wait_s"),
            ("burst fps", "parameters", "burst_fps"),
            ("frames (mean)", "metrics", "back_to_back_frames"),
            ("min", "metrics", "back_to_back_min_frames"),
            ("max", "metrics", "back_to_back_max_frames"),
            ("burst s", "metrics", "burst_s"),
            ("repetitions", "parameters", "repetitions"),
            ("trials", "metrics", "trials"),
        ],
    ),
    "rfc2544.overload": (
        "Overload sweep (seed 000 Table 4): latency and throughput at each offered rate",
        [
            ("frame B", "parameters", "frame_bytes"),
            ("trial s", "parameters", "duration_s"),
            ("wait s", "parameters", "wait_s"),
            ("offered fps", "parameters", "offered_fps"),
            ("offered Mb/s", "parameters", "offered_mbps"),
            ("throughput Mb/s", "metrics", "throughput_mbps"),
            ("latency ms", "metrics", "latency_ms"),
            ("max ms", "metrics", "latency_max_ms"),
            ("loss %", "metrics", "loss_pct"),
            ("queued at stop %", "metrics", "queued_at_stop_pct"),
        ],
    ),
}


def rfc2544_tables(records: list[dict[str, Any]]) -> list[Table]:
    """One table per RFC 2544 method among ``records``: a row per record (frame size, or
    frame size and load for the loss curve and the overload sweep), the method's result
    columns only; bidirectional tests say so in the title."""
    out = []
    for method, (title, cols) in RFC2544_COLUMNS.items():
        recs = [r for r in records if r.get("test") == method]
        if not recs:
            continue
        both = any((r.get("parameters") or {}).get("bidirectional") for r in recs)
        present = [c for c in cols if any((r.get(c[1]) or {}).get(c[2]) is not None for r in recs)]
        anchor = method.replace(".", "-").replace("_", "-")
        table = Table(
            box=box.SIMPLE_HEAD,
            title=title + (" (bidirectional)" if both else ""),
            title_justify="left",
            pad_edge=False,
            collapse_padding=True,
            caption=f"definitions: {METRICS_DOC}#{anchor}",
            caption_justify="left",
        )
        for header, _, _ in present:
            table.add_column(header, justify="right")
        for r in recs:
            cells = []
            for _, part, key in present:
                v = (r.get(part) or {}).get(key)
                cells.append(
                    "–" if v is None else (f"{v:,.3f}".rstrip("0").rstrip(".") if isinstance(v, float) else str(v))
                )
            table.add_row(*cells)
        out.append(table)
    return out


def rfc2544_warnings(records: list[dict[str, Any]]) -> list[str]:
    """The warnings of RFC 2544 records (a trial whose result depends on its length), one
    line each, with the frame size and load it concerns."""
    lines = []
    for r in records:
        warning = (r.get("metrics") or {}).get("warning")
        if r.get("test", "").startswith("rfc2544.") and warning:
            p = r.get("parameters") or {}
            at = f"{p.get('frame_bytes')} B" + (
                f" at {p['offered_fps']:g} fps" if p.get("offered_fps") is not None else ""
            )
            lines.append(f"warning ({r['test']}, {at}): {warning}")
    return lines


def render_test_run(console: Console, net: Any, run: Any) -> None:
    """One test run (``qoslab.backends.sim.TestRun``) of network ``net`` as ``qoslab run``
    prints it: :func:`render_run` with each flow labelled FROM→TO by node names (the
    learning frames marked "(learn)") and each node's CPU profile."""
    from qoslab.methods import records_by_flow

    names = net.node_names
    owner = {str(a.ip): n for n, addrs in net.addresses.items() for a in addrs}
    labels = {
        f.id: f"{names[f.from_]}→{owner.get(str(f.to), str(f.to))}" + ("" if f.id in run.plan.measured else " (learn)")
        for f in run.plan.flows
    }
    profiles = {n.name: n.cpu.profile for n in net.config.nodes}
    render_run(
        console, run.label, run.results, records_by_flow(run.plan, run.records), labels, profiles, records=run.records
    )


def render_run(
    console: Console,
    title: str,
    results: Results,
    records_by_flow: dict[int, dict[str, Any]],
    labels: dict[int, str],
    profiles: dict[str, str],
    *,
    records: list[dict[str, Any]] | None = None,
) -> None:
    """A whole run: a heading, flows, links, nodes, drops, and the tables at the end.
    An RFC 2544 test (``records`` given) is shown as its method's table first; the flows,
    links and nodes below it are then its last trial's."""
    console.rule(f"[bold]{escape(title)}")
    methods = rfc2544_tables(records or [])
    for table in methods:
        console.print(table)
    for line in rfc2544_warnings(records or []):
        console.print(f"[yellow]{escape(line)}[/]")
    if methods:
        console.print(
            "[dim]the last trial in detail (its own flows: UDP Mb/s is its payload rate, not the search's result):[/]"
        )
    console.print(f"simulated {results.sim_time_ns / 1e9:.3f} s, {results.events} events")
    console.print(flows_table(results, records_by_flow, labels))
    path = tcp_path_table(results, labels)
    if path is not None:
        console.print(path)
    shown: set[int] = set()
    for record in records_by_flow.values():
        if record.get("test", "").startswith("tcp.") and id(record) not in shown:
            shown.add(id(record))
            tcp_report(console, record)
    console.print(links_table(results))
    console.print(nodes_table(results, profiles))
    ipsec = ipsec_table(results)
    if ipsec is not None:
        console.print(ipsec)
    atm_summary(console, results)
    drop_log(console, results, labels)
    tables(console, results)


def death_points(results: Results, flow_id: int) -> list[dict[str, Any]]:
    """Where the packets of a flow died: each (node, port, reason) with its count, the
    first time and the first summary, in order of first occurrence. Drops of frames that
    belong to no flow (the ARP exchange a flow depends on) count too: a run for one flow
    has no other traffic, and they are usually the first cause."""
    seen: dict[tuple[str, str | None, str], dict[str, Any]] = {}
    counts: Counter[tuple[str, str | None, str]] = Counter()
    for d in sorted(results.drop_log, key=lambda d: d.time_ns):
        if d.flow not in (flow_id, None):
            continue
        key = (d.node, d.port, d.reason)
        counts[key] += 1
        seen.setdefault(
            key,
            {"node": d.node, "port": d.port, "reason": d.reason, "first_ms": d.time_ns / 1e6, "summary": d.summary},
        )
    return [dict(v, count=counts[k]) for k, v in seen.items()]


def render_reach(console: Console, names: list[str], pairs: list[dict[str, Any]]) -> None:
    """The reachability matrix (rows send, columns answer), then why each failed pair fails.

    When pairs stand for groups of interchangeable nodes (a large network: see
    :mod:`qoslab.reach_groups`), the matrix has one row and column per group, named by
    its first node and its size."""
    by = {(p["from"], p["to"]): p for p in pairs}
    if any("represents" in p for p in pairs):
        size: dict[str, int] = {}
        for p in pairs:
            size.setdefault(p["from"], p.get("from_group", 1))
        names = [n for n in names if n in size]
        shown = {n: n + (f" (+{size[n] - 1:,} like it)" if size[n] > 1 else "") for n in names}
        for p in pairs:  # a group's own pair is between its first two nodes
            if p.get("from_group", 1) > 1 and p["to"] not in size:
                by[(p["from"], p["from"])] = p
        console.print(
            f"[dim]{sum(p.get('represents', 1) for p in pairs):,} ordered pairs in {len(names)} groups of interchangeable nodes "
            "(alike in every setting, on the same neighbour, named nowhere else): one pair pinged for each pair of groups and inside each group[/]"
        )
    else:
        shown = {n: n for n in names}
    table = Table(box=box.SQUARE, title="Reachability (ICMP echo, replies/requests)", title_justify="left")
    table.add_column("from \\ to")
    for n in names:
        table.add_column(escape(shown[n]), justify="center")
    for a in names:
        row = []
        for b in names:
            pair = by.get((a, b))
            if pair is None or (a == b and pair.get("from_group", 1) < 2):
                row.append("·")
            else:
                style = "green" if pair["received"] == pair["sent"] else ("yellow" if pair["received"] else "red")
                row.append(f"[{style}]{pair['received']}/{pair['sent']}[/]")
        table.add_row(escape(shown[a]), *row)
    console.print(table)
    for p in pairs:
        if p["received"] == p["sent"]:
            continue
        console.print(
            f"[bold]{escape(p['from'])} → {escape(p['to'])}[/] ({escape(p['to_address'])}): {p['received']}/{p['sent']} replies"
        )
        if not p["drops"]:
            console.print(
                "  no drop was logged for this flow: requests or replies went unanswered (no ARP reply, no route, or lost past the run)"
            )
        for d in p["drops"]:
            where = d["node"] + (f"/{d['port']}" if d.get("port") else "")
            console.print(
                f"  dies at {escape(where)} ({d['count']}×, first at {d['first_ms']:.3f} ms): {escape(d['reason'])}"
            )
            if d.get("summary"):
                console.print(f"    {escape(d['summary'])}")


__all__ = [
    "tcp_report",
    "render_run",
    "render_test_run",
    "render_reach",
    "death_points",
    "flows_table",
    "tcp_path_table",
    "links_table",
    "nodes_table",
    "tables",
    "drop_log",
]


HEADLINE_METRICS = (
    "throughput_mbps",
    "throughput_two_way_mbps",
    "transfer_time_s",
    "loss_pct",
    "loss_forward_pct",
    "loss_reverse_pct",
    "latency_ms",
    "rtt_mean_ms",
    "jitter_ms",
    "retransmits",
)
"""The metrics a sweep table shows, in this order, where a record has them (``--json``
and the tidy tables keep every metric)."""


def _headline_metrics(records: list[dict[str, Any]]) -> list[str]:
    present = {
        k
        for rec in records
        for k, v in rec.get("metrics", {}).items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
    return [k for k in HEADLINE_METRICS if k in present]


def _cpu_peak(rec: dict[str, Any]) -> float | None:
    cpu = rec.get("metrics", {}).get("cpu_util_pct")
    return max(cpu.values()) if isinstance(cpu, dict) and cpu else None


def sweep_table(records: list[dict[str, Any]]) -> Table:
    """One row per swept point and test: the point's values, then the headline metrics
    (:data:`HEADLINE_METRICS`) and the busiest modelled CPU."""
    params: dict[str, None] = {}
    for rec in records:
        for key in rec.get("sweep", {}):
            params.setdefault(key, None)
    metrics = _headline_metrics(records)
    with_cpu = any(_cpu_peak(rec) is not None for rec in records)
    table = Table(box=box.SIMPLE_HEAD, title="Sweep: one row per point and test", title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    for key in params:
        table.add_column(escape(key), justify="right", no_wrap=True)
    table.add_column("test", no_wrap=True)
    for key in metrics:
        table.add_column(escape(key), justify="right", no_wrap=True)
    if with_cpu:
        table.add_column("cpu_peak_pct", justify="right", no_wrap=True)
    for rec in records:
        values = rec.get("sweep", {})
        cells = [
            str(rec.get("point", "")),
            *(escape(str(values.get(k, "–"))) for k in params),
            escape(rec.get("name") or rec.get("test", "")),
        ]
        for key in metrics:
            value = rec.get("metrics", {}).get(key)
            cells.append("–" if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value:.4g}")
        if with_cpu:
            cells.append(_num(_cpu_peak(rec), "{:.1f}"))
        table.add_row(*cells)
    return table
