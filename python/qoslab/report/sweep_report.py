"""DIR/report.html of ``qoslab sweep FILE --out DIR --report``: one self-contained page
(figures inline as data URIs, as ``run --report``'s page, python/qoslab/report/html.py)
with the sweep's set-up, a figure of each swept key against each metric (the mean over
replications with its 95 % confidence interval as error bars), the aggregated table and
the failed points with their errors. The figures are also written as
DIR/figures/<key>__<metric>.png and .svg.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from qoslab.scenario import Scenario


def _cell(value: Any) -> str:
    """A table cell's text: numbers to 4 significant digits, None as a dash."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return html.escape(", ".join(f"{k} = {v}" for k, v in value.items()))
    return html.escape(str(value))


def aggregated_table(keys: list[str], rows: list[dict[str, Any]]) -> str:
    """The aggregation over replications as an HTML table: a row per (swept values,
    test, flow), a column per metric holding ``mean ± ci95 (n)`` (``mean (n)`` when n = 1)."""
    from qoslab.store import unit_of

    metrics = list(dict.fromkeys(k for r in rows for k, v in r.items() if isinstance(v, dict)))
    head = [k for k in keys] + ["test", "name", "from", "to"]
    head = [h for h in head if any(r.get(h) is not None for r in rows)]
    out = ['<table id="aggregate"><tr>']
    out += [f'<th class="l">{html.escape(h)}</th>' for h in head]
    out += [
        f"<th>{html.escape(m)}" + (f" ({html.escape(unit_of(m))})" if unit_of(m) else "") + "</th>" for m in metrics
    ]
    out.append("</tr>")
    for r in rows:
        out.append("<tr>" + "".join(f'<td class="l">{_cell(r.get(h))}</td>' for h in head))
        for m in metrics:
            cell = r.get(m)
            if not isinstance(cell, dict) or cell.get("mean") is None:
                out.append("<td>–</td>")
                continue
            text = _cell(float(cell["mean"]))
            if cell.get("ci95") is not None:
                text += f" ± {_cell(float(cell['ci95']))}"
            out.append(f"<td>{text} ({cell['n']})</td>")
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def failed_table(failed: list[dict[str, Any]]) -> str:
    """The failed points: point, replication, seed, the swept values as written, the error."""
    if not failed:
        return "<p>None: every point ran.</p>"
    out = [
        '<table id="failed"><tr><th>point</th><th>replication</th><th>seed</th><th class="l">values</th><th class="l">error</th></tr>'
    ]
    for f in failed:
        out.append(
            f"<tr><td>{_cell(f.get('point'))}</td><td>{_cell(f.get('replication'))}</td><td>{_cell(f.get('seed'))}</td>"
            f'<td class="l">{_cell(f.get("written"))}</td><td class="l"><code>{_cell(f.get("error"))}</code></td></tr>'
        )
    out.append("</table>")
    return "".join(out)


def write_sweep_report(
    scenario: Scenario, source: Path, directory: Path, *, points: int, replications: int, sweep_id: str
) -> tuple[Path, int]:
    """Write ``directory``/report.html from the results store in ``directory``.
    Returns the page's path and the number of figures."""
    from qoslab.report.html import CSS, _img, figure_data, setup_svg
    from qoslab.store import aggregate, failed_points, figure_name, sweep_figures

    keys, rows = aggregate(directory)
    failed = failed_points(directory)
    body = [
        f"<h1>{html.escape(scenario.scenario.name)}: sweep</h1>",
        f"<p>Scenario <code>{html.escape(str(source))}</code>, base seed {scenario.scenario.seed}, sweep "
        f"<code>{html.escape(sweep_id[:16])}</code>: {points} point{'s' if points != 1 else ''} × {replications} "
        f"replication{'s' if replications != 1 else ''}; {len(failed)} failed. Results store: "
        f'<code>{html.escape(str(directory))}/points/</code> (<code>qoslab results {html.escape(str(directory))} "SELECT …"</code>).</p>',
        "<p>Definitions: <code>docs/metrics.md</code> (each metric's name is a heading there; SI prefixes, "
        "1 Mb/s = 10<sup>6</sup> bit/s); the store's columns and the aggregation: <code>docs/results-store.md</code>. "
        "Error bars and ± are the half-width of the two-sided 95 % confidence interval of the mean over the "
        "replications (Student t); none with one replication.</p>",
        f'<h2 id="setup">Set-up</h2><div class="setup">{setup_svg(scenario)}</div>',
        '<h2 id="figures">Figures</h2>',
    ]
    count = 0
    for key, metric, fig in sweep_figures(directory):
        name = figure_name(key, metric)
        uri = figure_data(fig, directory, name)
        count += 1
        body.append(
            f'<figure id="fig-{html.escape(name)}">{_img(uri, f"{metric} against {key}")}'
            f"<figcaption>{html.escape(metric)} against {html.escape(key)}: mean over replications, 95 % CI "
            f"(figures/{html.escape(name)}.png, .svg)</figcaption></figure>"
        )
    if not count:
        body.append("<p>No figure: no point ran, or the sweep varies no key.</p>")
    body.append('<h2 id="aggregate-table">Aggregated over replications</h2>')
    body.append(aggregated_table(keys, rows) if rows else "<p>No point ran.</p>")
    body.append(f'<h2 id="failed-points">Failed points ({len(failed)})</h2>')
    body.append(failed_table(failed))
    title = html.escape(scenario.scenario.name) + ": sweep"
    page = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n"
    )
    path = directory / "report.html"
    path.write_text(page, encoding="utf-8")
    return path, count


__all__ = ["write_sweep_report", "aggregated_table", "failed_table"]
