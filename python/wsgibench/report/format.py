"""Number formatting shared by the HTML, Markdown and terminal outputs (the report and `show`)."""

from __future__ import annotations

from typing import Any

from wsgibench.results.stats import Summary


def whole(value: float | None) -> str:
    """A whole number with thousands separators: req/s, requests per CPU-second, CPU %."""
    return "-" if value is None else f"{value:,.0f}"


rps = whole


def ms_of(value_us: float | None) -> float | None:
    """Milliseconds from microseconds (none stays none)."""
    return None if value_us is None else value_us / 1000


def ms(value_us: float | None, spec: str = "", unit: str = "") -> str:
    """Milliseconds from microseconds: 3 decimals below 1 ms, 2 below 100, whole above, or as the
    format `spec` says (".2f"); `unit` follows the number ("-" alone for none)."""
    v = ms_of(value_us)
    if v is None:
        return "-"
    spec = spec or (".3f" if v < 1 else ".2f" if v < 100 else ",.0f")
    return f"{v:{spec}}{unit}"


def kinds(by_kind: dict[str, tuple[float | None, float | None]]) -> str:
    """Each request kind's p50 and p99 (µs), e.g. "by kind: slow p50 501 ms p99 998 ms; fast p50
    0.212 ms p99 0.9 ms" ("" for a load of one kind)."""
    if len(by_kind) < 2:
        return ""
    parts = [
        f"{name} p50 {ms(p50, '.3g', ' ms')} p99 {ms(p99, '.3g', ' ms')}"
        for name, (p50, p99) in by_kind.items()
    ]
    return "by kind: " + "; ".join(parts)


def cv(summary: Summary | None) -> str:
    """The coefficient of variation of req/s; none for a single repeat (there is no spread)."""
    if summary is None:
        return "-"
    if summary.n < 2:
        return "—"
    return f"{summary.cv * 100:.1f}%" + (" !" if summary.noisy else "")


def cores(value: float | None) -> str:
    """Cores used (CPU seconds per second), two decimals: 1.25 is a quarter core beyond one."""
    return "-" if value is None else f"{value:.2f}"


def mib(value_bytes: float | None) -> str:
    return "-" if value_bytes is None else f"{value_bytes / 2**20:.1f}"


def pct(fraction: float | None) -> str:
    return "-" if fraction is None else f"{fraction * 100:.2f}%"


def level(value: float) -> str:
    return f"{value:g}"


# The protocol capabilities (run/protocol_probe.py): label, short label, key.
PROTOCOLS = [("WebSocket", "ws", "websocket"), ("h2c", "h2c", "h2c"), ("h2 (ALPN)", "h2", "h2")]


def caps(capabilities: dict[str, Any] | None) -> str:
    """HTTP/1.0, keep-alive and pipelining support, as the behaviour checks found it, and the
    bytes of one pong reply on the wire (a server that sends less is seen to)."""
    if not capabilities:
        return "-"
    marks = [("HTTP/1.0", "http10"), ("keep-alive", "keep_alive"), ("pipelining", "pipelining")]
    # The protocols probed for a load that needed them (None: not probed).
    marks += [(label, key) for label, _, key in PROTOCOLS if capabilities.get(key) is not None]
    said = ", ".join(label if capabilities.get(key) else f"no {label}" for label, key in marks)
    wire = capabilities.get("wire_bytes")
    return said + (f"; {wire} B per reply ({capabilities.get('wire_head', '')})" if wire else "")


def caps_short(capabilities: dict[str, Any] | None) -> str:
    """`caps` in a few characters, for a terminal column: "1.0 ka no-pipe 123B"."""
    if not capabilities:
        return "-"
    marks = [("1.0", "http10"), ("ka", "keep_alive"), ("pipe", "pipelining")]
    marks += [(short, key) for _, short, key in PROTOCOLS if capabilities.get(key) is not None]
    said = " ".join(label if capabilities.get(key) else f"no-{label}" for label, key in marks)
    return said + (f" {capabilities['wire_bytes']}B" if capabilities.get("wire_bytes") else "")


def ids(values: list[int]) -> str:
    return " ".join(map(str, values)) or "-"
