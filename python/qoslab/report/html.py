"""report.html: one self-contained page per output directory (figures inline as data
URIs, the set-up drawn as inline SVG, a few lines of inline script; nothing fetched, so it
works offline).

The page starts with the strict agreement share, a table of contents and a summary
(seed × status) whose cells open the row table filtered to that seed and status. For
each study, a section with a permalink: the question; the set-up drawn by graphviz from
its scenario's topology; the figures (2× resolution, legends outside the plotted area),
the published points overlaid; each of the paper's tables with a column of ours beside
each published column, every "ours" cell linking to its row; what agrees and what does
not, and why. At the end, every row of summary.json in one table that can be filtered by
seed, status and text and sorted by any column. Links of the form ``#rows?seed=000&status=differs``
open the table filtered.
"""

from __future__ import annotations

import base64
import html
import io
import re
import shutil
import struct
import subprocess
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
a.pl{color:#bbb;text-decoration:none;margin-left:.35em;font-weight:normal}a.pl:hover{color:#06c}
nav#contents ol{columns:2;font-size:.92em}nav#contents ul{margin:.1em 0 .3em;padding-left:1.2em;font-size:.9em}
td a{color:inherit}#rowtable th{cursor:pointer;user-select:none}#rowtable th[data-dir=asc]::after{content:" ▲"}#rowtable th[data-dir=desc]::after{content:" ▼"}
#rowtable tr:target,#rowtable tr.hit{outline:2px solid #06c}.filters{position:sticky;top:0;background:#fff;padding:.4em 0;border-bottom:1px solid #ddd}
.filters label{margin-right:1em}
"""

SCRIPT = """
(function(){
  var table = document.getElementById('rowtable');
  if (!table) return;
  var body = table.tBodies[0], seed = document.getElementById('f-seed'), status = document.getElementById('f-status');
  var text = document.getElementById('f-text'), shown = document.getElementById('f-shown');
  function apply() {
    var s = seed.value, st = status.value, q = text.value.toLowerCase(), n = 0;
    for (var i = 0; i < body.rows.length; i++) {
      var tr = body.rows[i];
      var ok = (!s || tr.dataset.seed === s) && (!st || tr.dataset.status === st) && (!q || tr.textContent.toLowerCase().indexOf(q) >= 0);
      tr.hidden = !ok; if (ok) n++;
    }
    shown.textContent = n + ' of ' + body.rows.length + ' rows shown';
  }
  function fromHash() {
    var h = decodeURIComponent(location.hash.slice(1));
    if (h === 'rows' || h.indexOf('rows?') === 0) {
      var p = new URLSearchParams(h.split('?')[1] || '');
      seed.value = p.get('seed') || ''; status.value = p.get('status') || ''; text.value = p.get('q') || '';
      apply(); document.getElementById('rows').scrollIntoView();
    } else if (h.indexOf('row-') === 0) {
      var tr = document.getElementById(h);
      if (tr && tr.hidden) { seed.value = ''; status.value = ''; text.value = ''; apply(); tr.scrollIntoView(); }
    }
  }
  seed.addEventListener('change', apply); status.addEventListener('change', apply); text.addEventListener('input', apply);
  var heads = table.tHead.rows[0].cells;
  function key(tr, i) {
    var c = tr.cells[i];
    if (c.dataset.v !== undefined && c.dataset.v !== '') return parseFloat(c.dataset.v);
    var v = c.textContent.trim(), f = Number(v);
    return v !== '' && !isNaN(f) ? f : v.toLowerCase();
  }
  for (var i = 0; i < heads.length; i++) (function(i, th) {
    th.addEventListener('click', function() {
      var dir = th.dataset.dir === 'asc' ? 'desc' : 'asc';
      for (var j = 0; j < heads.length; j++) delete heads[j].dataset.dir;
      th.dataset.dir = dir;
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function(a, b) {
        var x = key(a, i), y = key(b, i), r;
        if (typeof x === typeof y) r = x < y ? -1 : x > y ? 1 : 0; else r = typeof x === 'number' ? -1 : 1;
        return dir === 'asc' ? r : -r;
      });
      rows.forEach(function(r) { body.appendChild(r); });
    });
  })(i, heads[i]);
  window.addEventListener('hashchange', fromHash);
  apply(); fromHash();
})();
"""

FIGURE_DPI = 220
"""Figures are drawn at twice the page's 110 dots per inch and shown at half their pixel
size, so they stay sharp on high-density screens and when zoomed."""


def figure_data(fig: Any, out: Path, name: str) -> str:
    """Save ``fig`` as out/figures/NAME.png and .svg; the PNG as a data URI for the page."""
    import matplotlib

    matplotlib.use("Agg")  # headless: no display is ever needed
    import matplotlib.pyplot as plt

    folder = out / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    legends_outside(fig)
    fig.savefig(folder / f"{name}.svg", metadata={"Date": None}, bbox_inches="tight")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
    (folder / f"{name}.png").write_bytes(buf.getvalue())
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def png_size(data_uri: str) -> tuple[int, int]:
    """Width and height in pixels of a PNG data URI (its IHDR chunk, PNG spec §11.2.2)."""
    raw = base64.b64decode(data_uri.split(",", 1)[1][:44])
    width, height = struct.unpack(">II", raw[16:24])
    return width, height


def _img(uri: str, alt: str) -> str:
    width, height = png_size(uri)
    return f'<img src="{uri}" alt="{html.escape(alt)}" width="{width // 2}" height="{height // 2}">'


def legends_outside(fig: Any) -> None:
    """Move every legend of ``fig`` below its axes, outside the plotted area, so that no
    legend covers a plotted point (the studies draw their legends with ``loc="best"``,
    which matplotlib places over data when no corner is free)."""
    for ax in fig.axes:
        old = ax.get_legend()
        if old is None:
            continue
        handles, labels = ax.get_legend_handles_labels()
        if not handles:
            continue
        size = old.get_texts()[0].get_fontsize() if old.get_texts() else 7
        old.remove()
        ax.legend(
            handles,
            labels,
            fontsize=size,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.16),
            ncol=2 if len(handles) > 3 else 1,
            frameon=False,
        )
    fig.tight_layout()


def legend_overlaps(fig: Any) -> list[str]:
    """Every plotted point of ``fig`` that falls inside a legend's box, in display
    coordinates (matplotlib's own bounding boxes): empty when no legend covers data."""
    import numpy as np

    fig.canvas.draw()
    boxes = [(ax, ax.get_legend().get_window_extent()) for ax in fig.axes if ax.get_legend() is not None]
    found = []
    for ax in fig.axes:
        points = []
        for line in ax.get_lines():
            xy = np.column_stack([line.get_xdata(orig=False), line.get_ydata(orig=False)]).astype(float)
            points.append((line.get_label(), line.get_transform().transform(xy)))
        for coll in ax.collections:
            offsets = np.asarray(coll.get_offsets(), dtype=float)
            if len(offsets):
                points.append((coll.get_label(), coll.get_offset_transform().transform(offsets)))
        for label, xy in points:
            xy = xy[np.isfinite(xy).all(axis=1)]
            for owner, box in boxes:
                inside = (xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1)
                if inside.any():
                    found.append(
                        f"{label!r} of axes {ax.get_title() or ax.get_ylabel()!r} under the legend of {owner.get_title() or owner.get_ylabel()!r}: {int(inside.sum())} point(s)"
                    )
    return found


def _link_label(link: Any) -> str:
    from qoslab.units import format_rate

    rate = getattr(link, "rate", None)
    if link.type == "wifi":
        return f"{link.standard} {format_rate(rate) if rate else ''} {getattr(link, 'security', '')}".replace(
            " open", ""
        ).strip()
    return f"{link.type} {format_rate(rate) if rate else ''}".strip()


def _node_label(scenario: Scenario, name: str) -> str:
    node = scenario.node[name]
    role = node.role + (f" {node.forwarding}" if getattr(node, "forwarding", None) and node.role == "bridge" else "")
    return f"{name}\n{role}"


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def setup_dot(scenario: Scenario) -> str:
    """The topology in graphviz's DOT language: a box per node (name and role), a line per
    wired link, an 802.11 BSS as a small medium node joined to its members by dashed lines
    (so a BSS of many stations is drawn as the star it is), tunnels as dotted arcs between
    their ends; every line labelled with the link's kind and rate."""
    lines = [
        "graph setup {",
        '  graph [overlap=false, splines=true, nodesep=0.5, ranksep=0.7, fontname="Helvetica", fontsize=10, pad=0.2];',
        '  node [shape=box, style=rounded, fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for name in scenario.node:
        lines.append(f"  {_dot_id(name)} [label={_dot_id(_node_label(scenario, name))}];")
    for i, link in enumerate(scenario.link):
        label = _dot_id(_link_label(link))
        if link.type == "wifi":
            members = ([link.ap] if link.ap else []) + list(link.stations)
            medium = _dot_id(f"link {i}: air")
            lines.append(f"  {medium} [shape=ellipse, style=dashed, label={label}, fontsize=9];")
            lines += [f"  {medium} -- {_dot_id(m)} [style=dashed];" for m in members]
        else:
            a, b = link.ends  # every link type but 802.11 joins two nodes
            lines.append(f"  {_dot_id(a)} -- {_dot_id(b)} [label={label}];")
    for t in scenario.tunnel:
        a, b = t.from_, t.to
        if a in scenario.node and b in scenario.node:
            lines.append(f"  {_dot_id(a)} -- {_dot_id(b)} [style=dotted, constraint=false, label={_dot_id(t.type)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def setup_svg(scenario: Scenario) -> str:
    """The set-up as inline SVG: laid out by graphviz (Debian's ``graphviz``, which
    scripts/install.sh installs) from :func:`setup_dot`, ``neato`` when a node has three
    or more neighbours (a star is drawn as a star), ``dot`` left to right otherwise (a path
    as a row). Without graphviz, a simple built-in drawing (:func:`setup_svg_builtin`)."""
    dot = shutil.which("dot")
    if dot is None:
        return setup_svg_builtin(scenario)
    source = setup_dot(scenario)
    degree: dict[str, int] = {}
    for m in re.finditer(r'^  ("(?:[^"\\]|\\.)*") -- ("(?:[^"\\]|\\.)*")', source, flags=re.M):
        for end in m.groups():
            degree[end] = degree.get(end, 0) + 1
    engine = "neato" if max(degree.values(), default=0) >= 3 else "dot"
    args = [dot, f"-K{engine}", "-Tsvg"] + (["-Grankdir=LR"] if engine == "dot" else [])
    proc = subprocess.run(args, input=source, capture_output=True, text=True, check=False, timeout=60)
    if proc.returncode != 0:
        return setup_svg_builtin(scenario)
    svg = re.sub(r"<!--.*?-->\s*", "", proc.stdout[proc.stdout.index("<svg") :], flags=re.S)
    if "xlink:" not in svg.replace("xmlns:xlink", ""):  # nothing links: no namespace to declare
        svg = svg.replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    return svg


def setup_svg_builtin(scenario: Scenario) -> str:
    """The topology as an SVG drawing without graphviz: nodes in a row along the path
    (breadth first from the first node), links labelled with their kind and rate, wifi
    dashed, tunnels dotted."""
    from qoslab.units import format_rate

    names = list(scenario.node)
    edges: list[tuple[str, str, str, str]] = []  # (a, b, label, style)
    for _i, link in enumerate(scenario.link):
        rate = getattr(link, "rate", None)
        label = f"{link.type} {format_rate(rate) if rate else ''}".strip()
        if link.type == "wifi":
            label = f"{link.standard} {format_rate(rate) if rate else ''} {getattr(link, 'security', '')}".replace(
                " open", ""
            ).strip()
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
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} 220" width="{width}" height="220" role="img" aria-label="set-up">'
    ]
    for a, b, label, style in edges:
        if a not in x or b not in x:
            continue
        dash = ' stroke-dasharray="6 4"' if style == "wifi" else ""
        parts.append(f'<line x1="{x[a]}" y1="{y}" x2="{x[b]}" y2="{y}" stroke="#222" stroke-width="2"{dash}/>')
        parts.append(
            f'<text x="{(x[a] + x[b]) / 2}" y="{y - 30}" font-size="11" text-anchor="middle">{html.escape(label)}</text>'
        )
    for t in scenario.tunnel:
        a, b = t.from_, t.to
        if a in x and b in x:
            parts.append(
                f'<path d="M{x[a]},{y + 28} C{x[a]},{y + 80} {x[b]},{y + 80} {x[b]},{y + 28}" fill="none" stroke="#555" stroke-dasharray="2 3"/>'
            )
    if scenario.tunnel:
        parts.append(
            f'<text x="20" y="210" font-size="11">dotted arcs: {len(scenario.tunnel)} tunnel(s) ({html.escape(", ".join(sorted({t.type for t in scenario.tunnel})))}); dashed lines: 802.11</text>'
        )
    for n in order:
        node = scenario.node[n]
        role = node.role + (
            f" {node.forwarding}" if getattr(node, "forwarding", None) and node.role == "bridge" else ""
        )
        parts.append(
            f'<rect x="{x[n] - 55}" y="{y - 22}" width="110" height="44" rx="6" fill="#fff" stroke="#111" stroke-width="1.5"/>'
        )
        parts.append(
            f'<text x="{x[n]}" y="{y - 3}" font-size="13" font-weight="bold" text-anchor="middle">{html.escape(n)}</text>'
        )
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


def _status_class(status: str) -> str:
    return {"agrees": "agrees", "differs": "differs", "calibration": "calibration"}.get(status, "nr")


def row_id(row: dict[str, Any]) -> str:
    """The HTML id of a summary row: ``row-SEED-KEY``, the key's characters outside
    ``[A-Za-z0-9._-]`` replaced by ``_`` (ids stay valid in a URL fragment)."""
    return f"row-{row['seed']}-" + re.sub(r"[^A-Za-z0-9._-]", "_", str(row["key"]))


def _sort_value(value: Any) -> str:
    """A cell's number for sorting (``data-v``): the value, or a range's low end."""
    if isinstance(value, list) and value and isinstance(value[0], (int, float)) and not isinstance(value[0], bool):
        return repr(float(value[0]))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(float(value))
    return ""


def _anchor(ident: str) -> str:
    return f'<a class="pl" href="#{ident}" title="link to this section">#</a>'


def _rows_table(rows: list[dict[str, Any]], seeds: list[str]) -> str:
    """Every row in one table: filters by seed, status and text, and sortable columns
    (:data:`SCRIPT`); each row has the id :func:`row_id`."""
    from qoslab.studies import STATUSES

    def options(values: list[str]) -> str:
        return '<option value="">all</option>' + "".join(
            f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in values
        )

    out = [
        '<div class="filters"><label>seed <select id="f-seed">' + options(seeds) + "</select></label>",
        '<label>status <select id="f-status">' + options(list(STATUSES)) + "</select></label>",
        '<label>text <input id="f-text" type="search" placeholder="filter rows"></label> <span id="f-shown"></span></div>',
    ]
    out.append(
        '<table id="rowtable"><thead><tr><th class="l">seed</th><th class="l">item</th><th>paper</th><th>ours (mean)</th><th>sd</th><th>seeds within tolerance</th><th class="l">unit</th><th>tolerance</th><th class="l">status</th><th class="l">why</th></tr></thead><tbody>'
    )
    for r in rows:
        why = r["note"] + (
            f" — tolerance: {r['tolerance_reason']}" if r["status"] in ("agrees", "differs", "calibration") else ""
        )
        status = r["status"] + (
            f" (from {r['derived_from']})" if r.get("derived_from") and r["status"] == "derived" else ""
        )
        out.append(
            f'<tr id="{row_id(r)}" data-seed="{html.escape(r["seed"])}" data-status="{html.escape(r["status"])}">'
            f'<td class="l"><a href="#seed{html.escape(r["seed"])}">{html.escape(r["seed"])}</a></td><td class="l">{html.escape(r["item"])}</td>'
            f'<td data-v="{_sort_value(r["paper"])}">{_fmt(r["paper"])}</td><td class="ours" data-v="{_sort_value(r["ours"])}">{_fmt(r["ours"])}</td>'
            f'<td data-v="{_sort_value(r.get("ours_sd"))}">{_fmt(r.get("ours_sd"))}</td><td>{_fmt(r.get("seeds_agreeing"))}</td><td class="l">{html.escape(r["unit"])}</td>'
            f'<td>{html.escape(r["tolerance"])}</td><td class="l {_status_class(r["status"])}">{html.escape(status)}</td><td class="l">{html.escape(why)}</td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def _seed_status_table(studies: list[Any], summary: list[dict[str, Any]]) -> str:
    """Seed × status counts; each cell opens the row table filtered to its seed and status."""
    from qoslab.studies import STATUSES

    head = "".join(f"<th>{html.escape(st)}</th>" for st in STATUSES)
    out = [f'<table id="summary-table"><tr><th class="l">seed</th>{head}<th>strict agreement</th></tr>']
    for study in studies + [None]:
        seed = study.seed if study is not None else ""
        rows = [r for r in summary if study is None or r["seed"] == seed]
        c = counts(rows)
        first = (
            f'<a href="#seed{seed}">{seed}: {html.escape(study.title)}</a>' if study is not None else "<b>all seeds</b>"
        )
        cells = []
        for st in STATUSES:
            query = "&amp;".join(q for q in (f"seed={seed}" if seed else "", f"status={st.replace(' ', '%20')}") if q)
            cells.append(
                f'<td class="{_status_class(st)}"><a href="#rows?{query}">{c[st]}</a></td>' if c[st] else "<td>0</td>"
            )
        compared = c["agrees"] + c["differs"]
        share = f"{100 * c['agrees'] / compared:.0f} %" if compared else "–"
        out.append(f'<tr><td class="l">{first}</td>{"".join(cells)}<td>{share}</td></tr>')
    out.append("</table>")
    return "".join(out)


def _paper_table(table: Any, by_key: dict[str, dict[str, Any]], ident: str) -> str:
    head = [f'<th class="l">{html.escape(table.columns[0])}</th>']
    for c in table.columns[1:]:
        head.append(f"<th>{html.escape(c)}<br>paper</th><th>ours</th>")
    out = [f'<h3 id="{ident}">{html.escape(table.title)}{_anchor(ident)}</h3><table><tr>{"".join(head)}</tr>']
    for label, keys in table.rows:
        cells = [f'<td class="l">{html.escape(label)}</td>']
        for k in keys:
            r = by_key.get(k or "")
            if r is None:
                cells.append("<td>–</td><td class='ours'>–</td>")
            else:
                cells.append(
                    f"<td>{_fmt(r['paper'])}</td><td class='ours {_status_class(r['status'])}' title='{html.escape(r['status'])}'><a href='#{row_id(r)}'>{_fmt(r['ours'])}</a></td>"
                )
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
    head = f"<p><b>Calibration.</b> {len(cal)} rows set a model parameter; " + (
        f"{len(misses)} miss their own target:</p><ul>"
        + "".join(f"<li class='differs'>{html.escape(m)}</li>" for m in misses)
        + "</ul>"
        if misses
        else "each meets its target.</p>"
    )
    return head


def _contents(studies: list[Any]) -> str:
    """The page's table of contents: the summary, each seed's sections, the row table."""
    toc = ['<nav id="contents"><h2>Contents</h2><ol><li><a href="#summary">Summary by seed and status</a></li>']
    for study in studies:
        sid = f"seed{study.seed}"
        parts = [
            ("setup", "Set-up"),
            ("figures", "Figures"),
            ("tables", "The paper's tables"),
            ("discussion", "What agrees and what does not"),
        ]
        toc.append(
            f'<li><a href="#{sid}">Seed {study.seed}: {html.escape(study.title)}</a><ul>'
            + "".join(f'<li><a href="#{sid}-{k}">{t}</a></li>' for k, t in parts)
            + f'<li><a href="#rows?seed={study.seed}">its rows</a></li></ul></li>'
        )
    toc.append('<li><a href="#rows">Every row (filter, sort)</a></li></ol></nav>')
    return "".join(toc)


def _study_section(
    study: Any, summary: list[dict[str, Any]], results: dict[str, dict[str, list[dict[str, Any]]]], out: Path
) -> list[str]:
    """One seed's section: its question, counts, set-up, figures, tables and discussion."""
    body: list[str] = []
    sid = f"seed{study.seed}"
    rows = [r for r in summary if r["seed"] == study.seed]
    data = results.get(study.seed, {})
    body.append(f'<section><h2 id="{sid}">Seed {study.seed}: {html.escape(study.title)}{_anchor(sid)}</h2>')
    body.append(f"<p><i>{html.escape(study.paper)}</i></p><p><b>Question.</b> {html.escape(study.question)}</p>")
    c = counts(rows)
    body.append(
        '<p class="counts">'
        + "".join(
            f'<span><a href="#rows?seed={study.seed}&amp;status={k.replace(" ", "%20")}"><b>{v}</b> {html.escape(k)}</a></span>'
            for k, v in c.items()
            if v
        )
        + "</p>"
    )
    if not data:
        body.append(
            "<p class='nr'>This seed's rows were kept from an earlier run into this directory; its points are not all in data/, so its figures are not drawn.</p>"
        )
    body.append(f'<h3 id="{sid}-setup">Set-up{_anchor(sid + "-setup")}</h3>')
    body += _setup(study)
    body.append(f'<h3 id="{sid}-figures">Figures{_anchor(sid + "-figures")}</h3>')
    for fig in study.figures(data) if data else []:
        uri = figure_data(fig.figure, out, fig.name)
        fid = f"{sid}-fig-{fig.name}"
        body.append(
            f'<figure id="{fid}">{_img(uri, fig.title)}<figcaption><b>{html.escape(fig.title)}.</b> {html.escape(fig.caption)} (figures/{fig.name}.png, .svg){_anchor(fid)}</figcaption></figure>'
        )
    body.append(f'<h3 id="{sid}-tables">The paper\'s tables{_anchor(sid + "-tables")}</h3>')
    by_key = {r["key"]: r for r in rows}
    for k, table in enumerate(study.tables()):
        body.append(_paper_table(table, by_key, f"{sid}-table-{k}"))
    body += _measured_tables(study, data)
    body.append(f'<h3 id="{sid}-discussion">What agrees and what does not{_anchor(sid + "-discussion")}</h3>')
    for para in study.discussion(rows, data):
        body.append(f"<p>{html.escape(para)}</p>")
    body.append(
        f'<p><a href="#rows?seed={study.seed}">Seed {study.seed}\'s {len(rows)} rows</a> (with the reason for each) are in the row table below.</p></section>'
    )
    return body


def _setup(study: Any) -> list[str]:
    """The set-up drawn from the study's first example scenario."""
    from qoslab.scenario import load_scenario
    from qoslab.studies import EXAMPLES

    body: list[str] = []
    if study.scenarios:
        path = EXAMPLES / study.scenarios[0]
        try:
            svg = setup_svg(load_scenario(path))
            body.append(f'<p>examples/{html.escape(study.scenarios[0])}</p><div class="setup">{svg}</div>')
        except Exception as err:  # a scenario another helper is still extending: say so, keep the report
            body.append(
                f"<p class='nr'>Set-up of examples/{html.escape(study.scenarios[0])} not drawn: {html.escape(str(err).splitlines()[0])}</p>"
            )
    return body


def _measured_tables(study: Any, data: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Tables of a study's own measurements, with no published column (optional)."""
    body: list[str] = []
    for title, header, trs in getattr(study, "measured_tables", lambda d: [])(data) if data else []:
        head = "".join(
            f'<th class="l">{html.escape(h)}</th>' if i == 0 else f"<th>{html.escape(h)}</th>"
            for i, h in enumerate(header)
        )
        cells = "".join(
            "<tr>"
            + "".join(
                f'<td class="l">{html.escape(c)}</td>' if i == 0 else f"<td class='ours'>{html.escape(c)}</td>"
                for i, c in enumerate(tr)
            )
            + "</tr>"
            for tr in trs
        )
        body.append(f"<h4>{html.escape(title)}</h4><table><tr>{head}</tr>{cells}</table>")
    return body


def write_report(
    studies: list[Any], results: dict[str, dict[str, list[dict[str, Any]]]], summary: list[dict[str, Any]], out: Path
) -> Path:
    total = counts(summary)
    body = [
        "<h1>qoslab: the seeds reproduced</h1>",
        f'<p class="top"><b>{html.escape(agreement(total))}.</b></p>',
        "<p>Each section re-runs one seed's experiment in the simulator from its <code>examples/</code> scenarios and sets every number the seed publishes beside ours (<code>summary.json</code>). Rows a model parameter was calibrated on, rows whose value is a setting of the study and rows derived by arithmetic from another row are marked and do not count as agreement; every simulated row is the mean over the seeds given in its <i>seeds</i> column (docs/agreement.md).</p>",
    ]
    body.append(_contents(studies))
    body.append(f'<h2 id="summary">Summary by seed and status{_anchor("summary")}</h2>')
    body.append("<p>Each count opens the rows it counts. <i>Strict agreement</i>: agrees / (agrees + differs).</p>")
    body.append(_seed_status_table(studies, summary))
    body.append(_calibration_html(summary))
    for study in studies:
        body += _study_section(study, summary, results, out)
    body.append(f'<h2 id="rows">Every row{_anchor("rows")}</h2>')
    body.append(
        "<p>One row per number a seed publishes (summary.json). Filter by seed, status or text; click a column's head to sort by it.</p>"
    )
    body.append(_rows_table(summary, [s.seed for s in studies]))
    page = f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>qoslab report</title><style>{CSS}</style></head><body>{"".join(body)}<script>{SCRIPT}</script></body></html>\n'
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


MEASURED_AXES = ("frame_bytes", "payload_bytes", "offered_fps", "load_pct")
"""The parameters a test itself varies (an RFC 2544 search's frame sizes, a load sweep)."""


def plot_axes(group: list[dict[str, Any]], swept: list[str]) -> tuple[str | None, list[str]]:
    """The x axis of a test's figure and the keys that split it into lines: the first
    swept key (any ``[sweep]`` path) or test parameter whose value varies in ``group``;
    every other varying swept key draws a line of its own.

    >>> rows = [{"link[0].rate": r, "payload_bytes": 56, "test[0].count": c} for r in ("1 Mbps", "10 Mbps") for c in (3, 5)]
    >>> plot_axes(rows, ["link[0].rate", "test[0].count"])
    ('link[0].rate', ['test[0].count'])
    >>> plot_axes([{"frame_bytes": 64}, {"frame_bytes": 1518}], [])
    ('frame_bytes', [])
    """
    varying = [
        k
        for k in list(swept) + list(MEASURED_AXES)
        if all(k in g for g in group) and len({str(g[k]) for g in group}) > 1
    ]
    if not varying:
        return None, []
    return varying[0], [k for k in varying[1:] if k in swept]


def axis_values(values: list[Any]) -> tuple[list[Any], str]:
    """Values of an axis as numbers where the scenario language reads them as
    quantities (rates in Mb/s, times in ms, sizes in bytes), else as they are (numbers,
    or labels, which matplotlib spaces evenly).

    >>> axis_values(["1 Mbps", "10 Mbps"])
    ([1.0, 10.0], 'Mb/s')
    >>> axis_values(["10 ms", "1 s"])
    ([10.0, 1000.0], 'ms')
    >>> axis_values(["cubic", "newreno"])
    (['cubic', 'newreno'], '')
    """
    from qoslab.units import UnitError, parse_rate, parse_size, parse_time

    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return list(values), ""
    for parse, unit, scale in ((parse_rate, "Mb/s", 1e6), (parse_time, "ms", 1e6), (parse_size, "bytes", 1)):
        try:
            return [parse(v) / scale for v in values], unit
        except (UnitError, ValueError, TypeError):
            continue
    return [str(v) for v in values], ""


def _test_figure(
    group: list[dict[str, Any]],
    label: str,
    x_key: str,
    y_keys: list[str],
    series_keys: list[str],
    out: Path,
    figure_name: str,
) -> str:
    """One test's figure: its first two metrics against ``x_key``, a line per series,
    written as ``figure_name``.png and .svg."""
    import matplotlib.pyplot as plt

    xs, x_unit = axis_values([g[x_key] for g in group])
    fig, axes = plt.subplots(1, len(y_keys[:2]), figsize=(5 * len(y_keys[:2]), 3.6), squeeze=False)
    for ax, y in zip(axes[0], y_keys[:2]):
        series: dict[str, list[tuple[Any, Any]]] = {}
        for x, g in zip(xs, group):
            if g.get(y) is not None:
                name = ", ".join(f"{k} = {g.get(k)}" for k in series_keys)
                series.setdefault(name, []).append((x, g[y]))
        for name, pts in series.items():
            pts.sort(key=lambda p: p[0] if not isinstance(p[0], str) else 0)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=name or None)
        if series_keys:
            ax.legend(fontsize=7)
        ax.set_xlabel(
            x_key.replace("_", " ").replace(" bytes", " (bytes)").replace(" fps", " (frames/s)").replace(" pct", " (%)")
            + (f" ({x_unit})" if x_unit else "")
        )
        ax.set_ylabel(y.replace("_mbps", " (Mb/s)").replace("_ms", " (ms)").replace("_pct", " (%)").replace("_", " "))
        ax.grid(True, color="0.85")
    fig.suptitle(label)
    fig.tight_layout()
    uri = figure_data(fig, out, figure_name)
    return f"<figure>{_img(uri, label)}<figcaption>{html.escape(label)}: against {html.escape(x_key)} (figures/{figure_name}.png, .svg)</figcaption></figure>"


def write_run_report(scenario: Scenario, source: Path, records: list[dict[str, Any]], out: Path) -> Path:
    """The same kind of page for a user's scenario (``qoslab run FILE --report DIR``):
    the set-up, one figure per test with more than one point, the records' table."""
    from qoslab.report.tables import columns, tidy, write_tables

    out.mkdir(parents=True, exist_ok=True)
    rows = tidy(records)
    write_tables(rows, out / "data")
    body = [
        f"<h1>{html.escape(scenario.scenario.name)}</h1><p>Scenario <code>{html.escape(str(source))}</code>, seed {scenario.scenario.seed}, simulator backend.</p>"
    ]
    body.append(f'<h2>Set-up</h2><div class="setup">{setup_svg(scenario)}</div>')
    body.append("<h2>Results</h2>")
    # Every column is a metric defined in docs/metrics.md (what, between which instants, which layer, unit).
    body.append(
        "<p>definitions: <code>docs/metrics.md</code> (each column's name is a heading there; SI prefixes, 1 Mb/s = 10<sup>6</sup> bit/s).</p>"
    )
    swept = list(dict.fromkeys(k for r in records for k in (r.get("sweep") or {})))
    by_test: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_test.setdefault(
            f"{r['test']} {r['from']} → {r['to']}" + (f" ({r['name']})" if r.get("name") else ""), []
        ).append(r)
    for i, (label, group) in enumerate(by_test.items()):
        x_key, series_keys = plot_axes(group, swept)
        y_keys = [
            k
            for k in (
                "throughput_mbps",
                "goodput_mbps",
                "latency_ms",
                "frame_loss_pct",
                "loss_pct",
                "back_to_back_frames",
                "rtt_mean_ms",
            )
            if any(g.get(k) is not None for g in group)
        ]
        if x_key and y_keys and len(group) > 1:
            body.append(_test_figure(group, label, x_key, y_keys, series_keys, out, f"test{i}"))
        cols = [c for c in columns(group) if c not in ("test", "from", "to", "name")]
        body.append(
            f"<h3>{html.escape(label)}</h3><table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>"
        )
        for g in group:
            body.append("<tr>" + "".join(f"<td>{_fmt(g.get(c))}</td>" for c in cols) + "</tr>")
        body.append("</table>")
    page = f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(scenario.scenario.name)}</title><style>{CSS}</style></head><body>{"".join(body)}</body></html>\n'
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


__all__ = [
    "write_report",
    "write_run_report",
    "plot_axes",
    "axis_values",
    "setup_svg",
    "setup_dot",
    "setup_svg_builtin",
    "figure_data",
    "legends_outside",
    "legend_overlaps",
    "png_size",
    "row_id",
    "counts",
    "agreement",
    "calibration_misses",
]
