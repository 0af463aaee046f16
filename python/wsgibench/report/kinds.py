"""The report's section per request kind, for a load with several kinds (a mix of [[requests]],
a replayed log): at each level, each server's kinds with their requests, valid replies per
second, latency percentiles and errors by class (results/kind_figures.py), in HTML and Markdown."""

from __future__ import annotations

import html

from wsgibench.report import format as fmt
from wsgibench.report.data import CellData, LoadData
from wsgibench.results.kind_figures import KindFigures, kind_figures, several_kinds

HEADS = ("server", "kind", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "errors", "classes")
LEFT = ("server", "kind", "classes")
WHAT = (
    "Per request kind — requests over the repeats; req/s (valid replies a second of the "
    "measured window) and latency percentiles the median over the repeats (corrected latency "
    "for open loads); errors a share of the kind's requests, by class"
)


def _figures(c: CellData) -> list[KindFigures]:
    results = [r.engine for r in c.repeats]
    return kind_figures(results) if several_kinds(results) else []


def rows(load: LoadData, level: float) -> list[list[str]]:
    """The servers at `level`, best throughput first, each with its kinds in the plan's order."""
    cells = [c for c in load.cells if c.cell.level == level]
    cells.sort(key=lambda c: (-(c.median("rps_ok") or 0.0), c.cell.server))
    out = []
    for c in cells:
        for i, k in enumerate(_figures(c)):
            out.append(
                [
                    c.label if i == 0 else "",
                    k.name,
                    f"{k.sent:,}",
                    fmt.whole(k.rps_ok),
                    fmt.ms(k.p50_us, ".2f"),
                    fmt.ms(k.p90_us, ".2f"),
                    fmt.ms(k.p99_us, ".2f"),
                    fmt.pct(k.error_rate),
                    k.classes_text() or "-",
                ]
            )
    return out


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def html_section(load: LoadData) -> str:
    """A table per level of the load's kinds ("" when it has one kind)."""
    parts = []
    head = "".join(f"<th{' class=l' if h in LEFT else ''}>{_e(h)}</th>" for h in HEADS)
    for level in load.levels:
        found = rows(load, level)
        if not found:
            continue
        body = "".join(
            "<tr>"
            + "".join(
                f"<td{' class=l' if h in LEFT else ''}>{_e(v)}</td>"
                for h, v in zip(HEADS, r, strict=True)
            )
            + "</tr>"
            for r in found
        )
        parts.append(
            f"<table class=kinds><caption><b>{_e(WHAT)}</b> — {_e(load.level_field)} "
            f"{_e(fmt.level(level))}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>"
        )
    return "".join(parts)


def markdown_section(load: LoadData) -> list[str]:
    lines: list[str] = []
    for level in load.levels:
        found = rows(load, level)
        if not found:
            continue
        lines += [
            f"#### `{load.name}` at {load.level_field} {fmt.level(level)}: per request kind",
            "",
            "| " + " | ".join(HEADS) + " |",
            "|" + "|".join("---" if h in LEFT else "---:" for h in HEADS) + "|",
        ]
        lines += ["| " + " | ".join(v.replace("|", "\\|") for v in r) + " |" for r in found]
        lines += ["", WHAT + ".", ""]
    return lines
