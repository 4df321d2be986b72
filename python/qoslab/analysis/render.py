"""Human-readable rendering of analyses (rich, to stderr)."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from qoslab.analysis.mtu import MtuReport


def mtu_renderable(report: MtuReport) -> Group:
    """Tables for one MTU analysis: layers, interfaces, the headline numbers,
    efficiency, and the datagram's wire cost when asked."""
    layers = Table(title="Layers, outermost first (overhead on a full-size packet)", title_justify="left")
    layers.add_column("layer")
    layers.add_column("overhead", justify="right")
    layers.add_column("made of")
    for layer in report.layers:
        made_of = ", ".join(f"{name} {size}" for name, size in layer.fields)
        label = layer.label + (f"  [dim]({layer.note})[/dim]" if layer.note else "")
        layers.add_row(label, f"{layer.overhead_bytes} B", made_of)

    interfaces = Table(title="Interfaces", title_justify="left")
    interfaces.add_column("interface")
    interfaces.add_column("layer")
    interfaces.add_column("MTU", justify="right")
    interfaces.add_column("largest that fits", justify="right")
    interfaces.add_column("from")
    for iface in report.interfaces:
        interfaces.add_row(iface.name, iface.layer, str(iface.mtu), str(iface.fits), iface.source)

    headline = Text.assemble(
        ("MTU ", "bold"),
        (f"{report.mtu}", "bold green"),
        "  (innermost interface)    ",
        ("TCP MSS ", "bold"),
        (f"{report.tcp_mss}", "bold green"),
        "    ",
        ("largest unfragmented UDP payload ", "bold"),
        (f"{report.udp_max_payload}", "bold green"),
    )

    efficiency = Table(title="Efficiency: payload over bytes on the wire", title_justify="left")
    efficiency.add_column("payload", justify="right")
    efficiency.add_column("wire bytes", justify="right")
    efficiency.add_column("wire bits", justify="right")
    efficiency.add_column("frames", justify="right")
    efficiency.add_column("efficiency", justify="right")
    for row in report.efficiency:
        efficiency.add_row(
            f"{row['payload_bytes']} B ({row['transport']})",
            str(row["wire_bytes"]),
            str(row["wire_bits"]),
            str(row["frames"]),
            f"{row['efficiency_pct']:.2f} %",
        )

    parts: list[RenderableType] = [Text(report.stack, style="bold"), layers, interfaces, headline, efficiency]
    if report.datagram is not None:
        d = report.datagram
        text = (
            f"one {d.bytes}-byte IPv4 datagram: {d.wire_bytes} bytes and {d.wire_bits} bits on the {report.physical} link, "
            f"in {d.fragments} frame{'s' if d.fragments != 1 else ''}"
        )
        if d.cells is not None:
            text += f", {d.cells} ATM cells"
        if d.dropped:
            text += f"; dropped: {d.dropped}"
        parts.append(Panel(text, title="datagram", title_align="left"))
    for note in report.notes:
        parts.append(Text("note: " + note, style="yellow"))
    return Group(*parts)


def render_mtu(report: MtuReport, console: Console) -> None:
    console.print(mtu_renderable(report))
