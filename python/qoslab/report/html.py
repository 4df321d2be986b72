"""report.html: one self-contained page per output directory (figures inline as data
URIs, the set-up drawn as inline SVG, no external file or script).

For each study: the question; the set-up drawn from its scenario's topology; the figures,
the published points overlaid; each of the paper's tables with a column of ours beside
each published column; the list of what agrees and what does not, and why.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

from qoslab.scenario import Scenario

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#111;line-height:1.45}
h1{font-size:1.6em}h2{border-bottom:2px solid #333;padding-bottom:.2em;margin-top:2.2em}h3{margin-top:1.6em}
table{border-collapse:collapse;margin:.8em 0;font-size:.86em}th,td{border:1px solid #bbb;padding:.25em .5em;text-align:right;vertical-align:top}
th{background:#eee}td.l,th.l{text-align:left}td.ours{background:#f4f4f4;font-weight:600}
.agrees{color:#064}.differs{color:#a00}.calibration{color:#555;font-style:italic}.nr{color:#777}
figure{margin:1.2em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{font-size:.85em;color:#333}
.setup svg{max-width:100%;height:auto;border:1px solid #ddd;background:#fff}
.counts span{margin-right:1.2em}
"""


def figure_data(fig: Any, out: Path, name: str) -> str:
    """Save ``fig`` as out/figures/NAME.png and .svg; the PNG as a data URI for the page."""
    import matplotlib

    matplotlib.use("Agg")  # headless: no display is ever needed
    import matplotlib.pyplot as plt

    folder = out / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    fig.savefig(folder / f"{name}.svg", metadata={"Date": None})
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    (folder / f"{name}.png").write_bytes(buf.getvalue())
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def setup_svg(scenario: Scenario) -> str:
    """The topology as an SVG drawing: nodes in a row along the path (breadth first from
    the first node), links labelled with their kind and rate, wifi dashed, tunnels dotted."""
    from qoslab.units import format_rate

    names = list(scenario.node)
    edges: list[tuple[str, str, str, str]] = []  # (a, b, label, style)
    for i, link in enumerate(scenario.link):
        rate = getattr(link, "rate", None)
        label = f"{link.type} {format_rate(rate) if rate else ''}".strip()
        if link.type == "wifi":
            label = f"{link.standard} {format_rate(rate) if rate else ''} {getattr(link, 'security', '')}".replace(" open", "").strip()
            members = ([link.ap] if link.ap else []) + list(link.stations)
            for st in members[1:]:
                edges.append((members[0], st, label, "wifi"))
        else:
            ends = list(getattr(link, "ends", []) or [])
            if len(ends) == 2:
                edges.append((ends[0], ends[1], label, "wire"))
    order: list[str] = []
    adjacency: dict[str, list[str]] = {n: [] for n in names}
    for a, b, _, _ in edges:
        adjacency.setdefault(a, []).append(b)
        adjacency.setdefault(b, []).append(a)
    for start in names:
        if start in order:
            continue
        queue = [start]
        while queue:
            n = queue.pop(0)
            if n in order:
                continue
            order.append(n)
            queue += [m for m in adjacency.get(n, []) if m not in order]
    width, step, y = 150 * max(1, len(order)) + 40, 150, 90
    x = {n: 40 + 75 + i * step for i, n in enumerate(order)}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} 220" width="{width}" height="220" role="img" aria-label="set-up">']
    for a, b, label, style in edges:
        if a not in x or b not in x:
            continue
        dash = ' stroke-dasharray="6 4"' if style == "wifi" else ""
        parts.append(f'<line x1="{x[a]}" y1="{y}" x2="{x[b]}" y2="{y}" stroke="#222" stroke-width="2"{dash}/>')
        parts.append(f'<text x="{(x[a] + x[b]) / 2}" y="{y - 30}" font-size="11" text-anchor="middle">{html.escape(label)}</text>')
    for t in scenario.tunnel:
        a, b = getattr(t, "from_", None), getattr(t, "to", None)
        if a in x and b in x:
            parts.append(f'<path d="M{x[a]},{y + 28} C{x[a]},{y + 80} {x[b]},{y + 80} {x[b]},{y + 28}" fill="none" stroke="#555" stroke-dasharray="2 3"/>')
    if scenario.tunnel:
        parts.append(f'<text x="20" y="210" font-size="11">dotted arcs: {len(scenario.tunnel)} tunnel(s) ({html.escape(", ".join(sorted({t.type for t in scenario.tunnel})))}); dashed lines: 802.11</text>')
    for n in order:
        node = scenario.node[n]
        role = node.role + (f" {node.forwarding}" if getattr(node, "forwarding", None) and node.role == "bridge" else "")
        parts.append(f'<rect x="{x[n] - 55}" y="{y - 22}" width="110" height="44" rx="6" fill="#fff" stroke="#111" stroke-width="1.5"/>')
        parts.append(f'<text x="{x[n]}" y="{y - 3}" font-size="13" font-weight="bold" text-anchor="middle">{html.escape(n)}</text>')
        parts.append(f'<text x="{x[n]}" y="{y + 14}" font-size="10" text-anchor="middle">{html.escape(role)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, list):
        return "–".join(_fmt(v) for v in value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return html.escape(str(value))


def _summary_table(rows: list[dict[str, Any]]) -> str:
    out = ['<table><tr><th class="l">item</th><th>paper</th><th>ours (mean)</th><th>sd</th><th>seeds within tolerance</th><th class="l">unit</th><th>tolerance</th><th class="l">status</th><th class="l">why</th></tr>']
    for r in rows:
        cls = {"agrees": "agrees", "differs": "differs", "calibration": "calibration"}.get(r["status"], "nr")
        why = r["note"] + (f" — tolerance: {r['tolerance_reason']}" if r["status"] in ("agrees", "differs", "calibration") else "")
        status = r["status"] + (f" (from {r['derived_from']})" if r.get("derived_from") and r["status"] == "derived" else "")
        out.append(f'<tr><td class="l">{html.escape(r["item"])}</td><td>{_fmt(r["paper"])}</td><td class="ours">{_fmt(r["ours"])}</td><td>{_fmt(r.get("ours_sd"))}</td><td>{_fmt(r.get("seeds_agreeing"))}</td><td class="l">{html.escape(r["unit"])}</td><td>{html.escape(r["tolerance"])}</td><td class="l {cls}">{html.escape(status)}</td><td class="l">{html.escape(why)}</td></tr>')
    out.append("</table>")
    return "".join(out)


def _paper_table(table: Any, by_key: dict[str, dict[str, Any]]) -> str:
    head = [f'<th class="l">{html.escape(table.columns[0])}</th>']
    for c in table.columns[1:]:
        head.append(f"<th>{html.escape(c)}<br>paper</th><th>ours</th>")
    out = [f"<h3>{html.escape(table.title)}</h3><table><tr>{''.join(head)}</tr>"]
    for label, keys in table.rows:
        cells = [f'<td class="l">{html.escape(label)}</td>']
        for k in keys:
            r = by_key.get(k or "")
            if r is None:
                cells.append("<td>–</td><td class='ours'>–</td>")
            else:
                cls = {"agrees": "agrees", "differs": "differs", "calibration": "calibration"}.get(r["status"], "nr")
                cells.append(f"<td>{_fmt(r['paper'])}</td><td class='ours {cls}' title='{html.escape(r['status'])}'>{_fmt(r['ours'])}</td>")
        out.append(f"<tr>{''.join(cells)}</tr>")
    out.append("</table>")
    return "".join(out)


def counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Rows by status, every status of :data:`qoslab.studies.STATUSES` listed."""
    from qoslab.studies import STATUSES

    c = dict.fromkeys(STATUSES, 0)
    for r in rows:
        c[r["status"]] = c.get(r["status"], 0) + 1
    return c


def agreement(c: dict[str, int]) -> str:
    """The strict share of agreement: only rows whose value is an outcome of a simulation
    are compared (``agrees`` and ``differs``); settings, derived rows, calibration rows,
    rows not reproduced and rows without a value are not (docs/agreement.md).

    >>> agreement({"agrees": 3, "differs": 1, "setting": 4, "derived": 2, "calibration": 2, "not reproduced": 5, "no value": 0})
    '3 of 4 compared rows agree (75 %), counted strictly: settings, derived and calibration rows do not count'
    """
    compared = c.get("agrees", 0) + c.get("differs", 0)
    share = f"{100 * c.get('agrees', 0) / compared:.0f} %" if compared else "none compared"
    return f"{c.get('agrees', 0)} of {compared} compared rows agree ({share}), counted strictly: settings, derived and calibration rows do not count"


def calibration_misses(rows: list[dict[str, Any]]) -> list[str]:
    """One line per calibration row that misses its own target, with its error."""
    from qoslab.studies import calibration_error

    out = []
    for r in rows:
        err = calibration_error(r)
        if err is not None:
            out.append(f"seed {r['seed']} {r['key']} ({r['item']}): {err}")
    return out


def _calibration_html(rows: list[dict[str, Any]]) -> str:
    cal = [r for r in rows if r["status"] == "calibration"]
    if not cal:
        return ""
    misses = calibration_misses(cal)
    head = f"<p><b>Calibration.</b> {len(cal)} rows set a model parameter; " + (f"{len(misses)} miss their own target:</p><ul>" + "".join(f"<li class='differs'>{html.escape(m)}</li>" for m in misses) + "</ul>" if misses else "each meets its target.</p>")
    return head


def write_report(studies: list[Any], results: dict[str, dict[str, list[dict[str, Any]]]], summary: list[dict[str, Any]], out: Path) -> Path:
    from qoslab.scenario import load_scenario
    from qoslab.studies import EXAMPLES

    body = ["<h1>qoslab: the seeds reproduced</h1>", "<p>Each section re-runs one seed's experiment in the simulator from its <code>examples/</code> scenarios and sets every number the seed publishes beside ours (<code>summary.json</code>). Rows a model parameter was calibrated on, rows whose value is a setting of the study and rows derived by arithmetic from another row are marked and do not count as agreement; every simulated row is the mean over the seeds given in its <i>seeds</i> column (docs/agreement.md).</p>"]
    total = counts(summary)
    body.insert(1, f'<p class="top"><b>{html.escape(agreement(total))}.</b></p>')
    body.append('<p class="counts">' + "".join(f"<span><b>{v}</b> {html.escape(k)}</span>" for k, v in total.items()) + "</p>")
    body.append(_calibration_html(summary))
    for study in studies:
        rows = [r for r in summary if r["seed"] == study.seed]
        data = results.get(study.seed, {})
        body.append(f'<h2 id="seed{study.seed}">Seed {study.seed}: {html.escape(study.title)}</h2>')
        body.append(f"<p><i>{html.escape(study.paper)}</i></p><p><b>Question.</b> {html.escape(study.question)}</p>")
        c = counts(rows)
        body.append('<p class="counts">' + "".join(f"<span><b>{v}</b> {html.escape(k)}</span>" for k, v in c.items() if v) + "</p>")
        if not data:
            body.append("<p class='nr'>This seed's rows were kept from an earlier run into this directory; its points are not all in data/, so its figures are not drawn.</p>")
        if study.scenarios:
            path = EXAMPLES / study.scenarios[0]
            try:
                svg = setup_svg(load_scenario(path))
                body.append(f'<h3>Set-up (examples/{html.escape(study.scenarios[0])})</h3><div class="setup">{svg}</div>')
            except Exception as err:  # a scenario another helper is still extending: say so, keep the report
                body.append(f"<p class='nr'>Set-up of examples/{html.escape(study.scenarios[0])} not drawn: {html.escape(str(err).splitlines()[0])}</p>")
        for fig in study.figures(data) if data else []:
            uri = figure_data(fig.figure, out, fig.name)
            body.append(f'<figure><img src="{uri}" alt="{html.escape(fig.title)}"><figcaption><b>{html.escape(fig.title)}.</b> {html.escape(fig.caption)} (figures/{fig.name}.png, .svg)</figcaption></figure>')
        by_key = {r["key"]: r for r in rows}
        for table in study.tables():
            body.append(_paper_table(table, by_key))
        # Tables of a study's own measurements, with no published column (optional).
        for title, header, trs in getattr(study, "measured_tables", lambda d: [])(data) if data else []:
            head = "".join(f'<th class="l">{html.escape(h)}</th>' if i == 0 else f"<th>{html.escape(h)}</th>" for i, h in enumerate(header))
            cells = "".join("<tr>" + "".join(f'<td class="l">{html.escape(c)}</td>' if i == 0 else f"<td class='ours'>{html.escape(c)}</td>" for i, c in enumerate(tr)) + "</tr>" for tr in trs)
            body.append(f"<h3>{html.escape(title)}</h3><table><tr>{head}</tr>{cells}</table>")
        body.append("<h3>What agrees and what does not</h3>")
        for para in study.discussion(rows, data):
            body.append(f"<p>{html.escape(para)}</p>")
        body.append(_summary_table(rows))
    page = f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>qoslab report</title><style>{CSS}</style></head><body>{"".join(body)}</body></html>\n'
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def write_run_report(scenario: Scenario, source: Path, records: list[dict[str, Any]], out: Path) -> Path:
    """The same kind of page for a user's scenario (``qoslab run FILE --report DIR``):
    the set-up, one figure per test with more than one point, the records' table."""
    import matplotlib.pyplot as plt

    from qoslab.report.tables import columns, tidy, write_tables

    out.mkdir(parents=True, exist_ok=True)
    rows = tidy(records)
    write_tables(rows, out / "data")
    body = [f"<h1>{html.escape(scenario.scenario.name)}</h1><p>Scenario <code>{html.escape(str(source))}</code>, seed {scenario.scenario.seed}, simulator backend.</p>"]
    body.append(f'<h2>Set-up</h2><div class="setup">{setup_svg(scenario)}</div>')
    body.append("<h2>Results</h2>")
    # Every column is a metric defined in docs/metrics.md (what, between which instants, which layer, unit).
    body.append("<p>definitions: <code>docs/metrics.md</code> (each column's name is a heading there; SI prefixes, 1 Mb/s = 10<sup>6</sup> bit/s).</p>")
    by_test: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_test.setdefault(f"{r['test']} {r['from']} → {r['to']}" + (f" ({r['name']})" if r.get("name") else ""), []).append(r)
    for i, (label, group) in enumerate(by_test.items()):
        x_key = next((k for k in ("frame_bytes", "payload_bytes", "offered_fps", "load_pct") if all(k in g for g in group)), None)
        y_keys = [k for k in ("throughput_mbps", "latency_ms", "frame_loss_pct", "loss_pct", "back_to_back_frames", "rtt_mean_ms") if any(g.get(k) is not None for g in group)]
        if x_key and y_keys and len(group) > 1:
            fig, axes = plt.subplots(1, len(y_keys[:2]), figsize=(5 * len(y_keys[:2]), 3.6), squeeze=False)
            for ax, y in zip(axes[0], y_keys[:2]):
                pts = sorted((g[x_key], g[y]) for g in group if g.get(y) is not None)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "ko-")
                ax.set_xlabel(x_key.replace("_", " ").replace(" bytes", " (bytes)").replace(" fps", " (frames/s)").replace(" pct", " (%)"))
                ax.set_ylabel(y.replace("_mbps", " (Mb/s)").replace("_ms", " (ms)").replace("_pct", " (%)").replace("_", " "))
                ax.grid(True, color="0.85")
            fig.suptitle(label)
            fig.tight_layout()
            uri = figure_data(fig, out, f"test{i}")
            body.append(f'<figure><img src="{uri}" alt="{html.escape(label)}"><figcaption>{html.escape(label)} (figures/test{i}.png, .svg)</figcaption></figure>')
        cols = [c for c in columns(group) if c not in ("test", "from", "to", "name")]
        body.append(f"<h3>{html.escape(label)}</h3><table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>")
        for g in group:
            body.append("<tr>" + "".join(f"<td>{_fmt(g.get(c))}</td>" for c in cols) + "</tr>")
        body.append("</table>")
    page = f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(scenario.scenario.name)}</title><style>{CSS}</style></head><body>{"".join(body)}</body></html>\n'
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


__all__ = ["write_report", "write_run_report", "setup_svg", "figure_data", "counts", "agreement", "calibration_misses"]
