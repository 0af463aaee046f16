"""Number formatting shared by the HTML, Markdown and terminal outputs."""

from __future__ import annotations


def rps(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def ms(value_us: float | None) -> str:
    if value_us is None:
        return "-"
    v = value_us / 1000
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:,.0f}"


def mib(value_bytes: float | None) -> str:
    return "-" if value_bytes is None else f"{value_bytes / 2**20:.1f}"


def pct(fraction: float | None) -> str:
    return "-" if fraction is None else f"{fraction * 100:.2f}%"


def level(value: float) -> str:
    return f"{value:g}"


def caps(capabilities: dict | None) -> str:
    """HTTP/1.0, keep-alive and pipelining support, as the behaviour checks found it, and the
    bytes of one pong reply on the wire (a server that sends less is seen to)."""
    if not capabilities:
        return "-"
    marks = [("HTTP/1.0", "http10"), ("keep-alive", "keep_alive"), ("pipelining", "pipelining")]
    said = ", ".join(label if capabilities.get(key) else f"no {label}" for label, key in marks)
    wire = capabilities.get("wire_bytes")
    return said + (f"; {wire} B per reply ({capabilities.get('wire_head', '')})" if wire else "")


def ids(values: list[int]) -> str:
    return " ".join(map(str, values)) or "-"
