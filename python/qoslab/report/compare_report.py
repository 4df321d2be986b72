"""``qoslab compare``'s report: a terminal table per test (rich) and the same tables as
one HTML page, from the comparison of :func:`qoslab.compare.compare`."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from rich.table import Table

VERDICT = {True: "within", False: "BEYOND", None: "-"}


def number(value: float | None) -> str:
    """Six significant digits, or '-' for null."""
    return "-" if value is None else f"{value:.6g}"


def mean_sd(s: dict[str, Any]) -> str:
    """``mean ± sd (n)`` of one backend's values."""
    if not s["n"]:
        return "null"
    return f"{number(s['mean'])} ± {number(s['sd'])} (n={s['n']})"


def row(m: dict[str, Any]) -> list[str]:
    """One metric's cells: metric, sim, emu, diff, diff %, spread + floor, verdict, reasons."""
    bound = None if m["spread"] is None else m["spread"] + m["floor"]
    pct = "-" if m["diff_pct"] is None else f"{m['diff_pct']:+.2f} %"
    return [
        m["metric"],
        mean_sd(m["sim"]),
        mean_sd(m["emu"]),
        number(m["diff"]),
        pct,
        number(bound),
        VERDICT[m["within"]],
        ", ".join(m["reasons"]),
    ]


HEADERS = ["metric", "sim mean ± sd", "emu mean ± sd", "emu − sim", "diff %", "spread + floor", "verdict", "reasons"]


def title(test: dict[str, Any]) -> str:
    name = f" {test['name']!r}" if test.get("name") else ""
    return f"{test['test']}{name} {test['from']} → {test['to']} (record {test['record']})"


def compare_table(test: dict[str, Any]) -> Table:
    """One test's metrics side by side."""
    table = Table(title=title(test), title_justify="left")
    for h in HEADERS:
        table.add_column(h, overflow="fold")
    for m in test["metrics"]:
        cells = row(m)
        style = "red" if m["within"] is False else None
        table.add_row(*cells, style=style)
    return table


def write_html(report: dict[str, Any], path: Path) -> Path:
    """The comparison as one self-contained HTML page (one table per test)."""
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>qoslab compare: {esc(report['scenario'])}</title>",
        "<style>body{font-family:sans-serif}table{border-collapse:collapse;margin-bottom:2em}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,th{text-align:left}"
        ".beyond{background:#fdd}</style></head><body>",
        f"<h1>{esc(report['scenario'])}: simulator and emulation side by side</h1>",
        f"<p>simulator seeds {esc(str(report['sim_seeds']))}; emulation runs with seeds "
        f"{esc(str(report['emu_seeds']))} (kernel {esc(str(report['kernel']))}, links "
        f"{esc(str(report['link_implementation']))}). Rule: {esc(report['rule']['within'])}, spread = "
        f"{esc(report['rule']['spread'])}; floor: {esc(report['rule']['floor'])} (docs/compare.md).</p>",
    ]
    if not report["complete"]:
        parts.append("<p><b>Interrupted:</b> over the runs that finished.</p>")
    for test in report["tests"]:
        parts.append(f"<h2>{esc(title(test))}</h2><table><tr>")
        parts += [f"<th>{esc(h)}</th>" for h in HEADERS]
        parts.append("</tr>")
        for m in test["metrics"]:
            cls = " class='beyond'" if m["within"] is False else ""
            parts.append(f"<tr{cls}>" + "".join(f"<td>{esc(c)}</td>" for c in row(m)) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
