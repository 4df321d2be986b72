"""A run as a network engineer reads it in a terminal: flows, links, CPUs, tables, drops.

Everything here prints to a :class:`rich.console.Console` (the CLI's is on stderr, so
``--json`` output on stdout stays clean).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

MAX_DROP_LINES = 12
"""Drop-log lines shown per run; the counts per reason are always complete."""


def _num(value: float | int | None, fmt: str = "{:.3f}") -> str:
    return "–" if value is None else fmt.format(value)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100.0 * value:.1f} %"


def flows_table(results: dict[str, Any], records_by_flow: dict[int, dict[str, Any]], labels: dict[int, str]) -> Table:
    """One row per flow: counts, throughput, latency (UDP, one way) or RTT (ping), jitter."""
    table = Table(box=box.SIMPLE_HEAD, title="Flows (times in ms: latency one way for UDP, round trip for ping and UDP echo)", title_justify="left", pad_edge=False, collapse_padding=True)
    table.add_column("flow", no_wrap=True)
    for col in ("sent", "recv", "lost", "loss%", "Mb/s", "latency mean/p99", "jitter"):
        table.add_column(col, justify="right", min_width=15 if col.startswith("lat") else None)
    for f in results.get("flows", []):
        fid = f["id"]
        metrics = (records_by_flow.get(fid) or {}).get("metrics", {})
        sent, lost = f.get("sent", 0), f.get("lost", 0)
        loss = f"{100.0 * lost / sent:.2f}" if sent else "–"
        if f.get("kind") == "ping":
            rtts = f.get("rtt_ns") or []
            lat = f"rtt {sum(rtts) / len(rtts) / 1e6:.3f}" if rtts else "–"
            tput = "–"
        else:
            lat_ns = f.get("latency_ns") or {}
            lat = f"{_num(lat_ns.get('mean') and lat_ns['mean'] / 1e6)} / {_num(lat_ns.get('p99') and lat_ns['p99'] / 1e6)}" if lat_ns else "–"
            if lat_ns and f.get("kind") == "udp-echo":
                lat = f"rtt {lat}"  # an echo's send time comes back with it: a round trip
            tput = _num(metrics.get("throughput_mbps", f.get("throughput_bps", 0) / 1e6))
        jitter = f.get("jitter_ns")
        label = f"{f.get('kind', '?')} {labels.get(fid, str(fid))}"
        table.add_row(escape(label), str(sent), str(f.get("received", 0)), str(lost), loss, tput, lat, _num(jitter and jitter / 1e6))
    return table


def links_table(results: dict[str, Any]) -> Table:
    """Utilisation of each Ethernet direction and each wifi cell's airtime; drops."""
    table = Table(box=box.SIMPLE_HEAD, title="Links", title_justify="left")
    for col in ("link", "type", "utilisation", "drops"):
        table.add_column(col, justify="right" if col in ("drops",) else "left")
    for link in results.get("links", []):
        u = link.get("utilization") or []
        if link.get("type") == "wifi":
            util = f"airtime busy {_pct(u[0] if u else None)}"
        else:
            util = f"a→b {_pct(u[0] if u else None)}, b→a {_pct(u[1] if len(u) > 1 else None)}"
        table.add_row(escape(link["name"]), link.get("type", "?"), util, str(link.get("drops", 0)))
    return table


def nodes_table(results: dict[str, Any], profiles: dict[str, str]) -> Table:
    """Per node: the CPU profile and its utilisation, CPU drops, drops by reason."""
    table = Table(box=box.SIMPLE_HEAD, title="Nodes", title_justify="left")
    for col in ("node", "cpu", "cpu busy", "cpu drops", "drops by reason"):
        table.add_column(col, justify="right" if col in ("cpu busy", "cpu drops") else "left")
    for node in results.get("nodes", []):
        drops = node.get("drops") or {}
        reasons = "; ".join(f"{n} × {escape(r)}" for r, n in sorted(drops.items(), key=lambda kv: -kv[1])) or "–"
        table.add_row(escape(node["name"]), escape(profiles.get(node["name"], "?")), _pct(node.get("cpu_utilization")), str(node.get("cpu_drops", 0)), reasons)
    return table


def _entries_table(title: str, results: dict[str, Any], key: str, columns: tuple[str, ...]) -> Table | None:
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left")
    table.add_column("node")
    for col in columns:
        table.add_column(col.upper() if col in ("ip", "mac") else col)
    rows = 0
    for node in results.get("nodes", []):
        for row in node.get(key) or []:
            table.add_row(escape(node["name"]), *(escape(str(row.get(c, ""))) for c in columns))
            rows += 1
    return table if rows else None


def tables(console: Console, results: dict[str, Any]) -> None:
    """Every node's ARP table, then the L3F and bridge tables (seed 000 Tables 2 and 3, Fig. 6)."""
    for title, key, columns in (
        ("ARP tables", "arp_table", ("ip", "mac", "port")),
        ("L3F tables", "l3f_table", ("ip", "mac", "port")),
        ("Bridge tables", "bridge_table", ("mac", "port")),
    ):
        table = _entries_table(title, results, key, columns)
        if table is not None:
            console.print(table)


def drop_log(console: Console, results: dict[str, Any], labels: dict[int, str]) -> None:
    """The first drops of the run, each with where and why."""
    log = results.get("drop_log") or []
    if not log:
        return
    console.print(f"[bold]Drops[/] ({len(log)} logged; the first {min(len(log), MAX_DROP_LINES)}):")
    for d in log[:MAX_DROP_LINES]:
        where = d["node"] + (f"/{d['port']}" if d.get("port") else "")
        flow = f" flow {labels.get(d['flow'], d['flow'])}" if d.get("flow") is not None else ""
        console.print(f"  {d['time_ns'] / 1e6:10.3f} ms  {escape(where)}{escape(flow)}: {escape(d['reason'])}" + (f" — {escape(d['summary'])}" if d.get("summary") else ""))


def atm_summary(console: Console, results: dict[str, Any]) -> None:
    """The ATM network's counters: cells, losses at the switches, AAL5 frames lost, SVCs."""
    atm = results.get("atm")
    if not atm:
        return
    cells = sum(sum(c) for c in atm.get("cells", []))
    lost = sum(atm.get("cells_lost", [])) + sum(atm.get("epd_cells", [])) + sum(atm.get("ppd_cells", []))
    setups = atm.get("svc_setup_ns") or []
    svc = f"{atm.get('svc_setups', 0)} SVCs set up" + (f" (mean {sum(setups) / len(setups) / 1e6:.3f} ms)" if setups else "")
    console.print(
        f"[bold]ATM[/]: {cells} cells sent, {lost} discarded at switches (queue full, EPD, PPD); "
        f"{atm.get('frames_received', 0)} of {atm.get('frames_sent', 0)} AAL5 frames reassembled, {atm.get('frames_corrupt', 0)} discarded (cells lost); "
        f"{svc}; {atm.get('atmarp_requests', 0)} ATMARP, {atm.get('inatmarp_requests', 0)} InATMARP requests"
    )


def render_run(console: Console, title: str, results: dict[str, Any], records_by_flow: dict[int, dict[str, Any]], labels: dict[int, str], profiles: dict[str, str]) -> None:
    """A whole run: a heading, flows, links, nodes, drops, and the tables at the end."""
    console.rule(f"[bold]{escape(title)}")
    console.print(f"simulated {results.get('sim_time_ns', 0) / 1e9:.3f} s, {results.get('events', 0)} events")
    console.print(flows_table(results, records_by_flow, labels))
    console.print(links_table(results))
    console.print(nodes_table(results, profiles))
    atm_summary(console, results)
    drop_log(console, results, labels)
    tables(console, results)


def death_points(results: dict[str, Any], flow_id: int) -> list[dict[str, Any]]:
    """Where the packets of a flow died: each (node, port, reason) with its count, the
    first time and the first summary, in order of first occurrence. Drops of frames that
    belong to no flow (the ARP exchange a flow depends on) count too: a run for one flow
    has no other traffic, and they are usually the first cause."""
    seen: dict[tuple[str, str | None, str], dict[str, Any]] = {}
    counts: Counter[tuple[str, str | None, str]] = Counter()
    for d in sorted(results.get("drop_log") or [], key=lambda d: d["time_ns"]):
        if d.get("flow") not in (flow_id, None):
            continue
        key = (d["node"], d.get("port"), d["reason"])
        counts[key] += 1
        seen.setdefault(key, {"node": d["node"], "port": d.get("port"), "reason": d["reason"], "first_ms": d["time_ns"] / 1e6, "summary": d.get("summary")})
    return [dict(v, count=counts[k]) for k, v in seen.items()]


def render_reach(console: Console, names: list[str], pairs: list[dict[str, Any]]) -> None:
    """The reachability matrix (rows send, columns answer), then why each failed pair fails."""
    by = {(p["from"], p["to"]): p for p in pairs}
    table = Table(box=box.SQUARE, title="Reachability (ICMP echo, replies/requests)", title_justify="left")
    table.add_column("from \\ to")
    for n in names:
        table.add_column(escape(n), justify="center")
    for a in names:
        row = []
        for b in names:
            p = by.get((a, b))
            if a == b or p is None:
                row.append("·")
            else:
                style = "green" if p["received"] == p["sent"] else ("yellow" if p["received"] else "red")
                row.append(f"[{style}]{p['received']}/{p['sent']}[/]")
        table.add_row(escape(a), *row)
    console.print(table)
    for p in pairs:
        if p["received"] == p["sent"]:
            continue
        console.print(f"[bold]{escape(p['from'])} → {escape(p['to'])}[/] ({escape(p['to_address'])}): {p['received']}/{p['sent']} replies")
        if not p["drops"]:
            console.print("  no drop was logged for this flow: requests or replies went unanswered (no ARP reply, no route, or lost past the run)")
        for d in p["drops"]:
            where = d["node"] + (f"/{d['port']}" if d.get("port") else "")
            console.print(f"  dies at {escape(where)} ({d['count']}×, first at {d['first_ms']:.3f} ms): {escape(d['reason'])}")
            if d.get("summary"):
                console.print(f"    {escape(d['summary'])}")


__all__ = ["render_run", "render_reach", "death_points", "flows_table", "links_table", "nodes_table", "tables", "drop_log"]


HEADLINE_METRICS = (
    "throughput_mbps",
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
    present = {k for rec in records for k, v in rec.get("metrics", {}).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
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
        cells = [str(rec.get("point", "")), *(escape(str(values.get(k, "–"))) for k in params), escape(rec.get("name") or rec.get("test", ""))]
        for key in metrics:
            value = rec.get("metrics", {}).get(key)
            cells.append("–" if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value:.4g}")
        if with_cpu:
            cells.append(_num(_cpu_peak(rec), "{:.1f}"))
        table.add_row(*cells)
    return table
