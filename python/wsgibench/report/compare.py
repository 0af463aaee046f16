"""Render a comparison of two stores: a terminal table and Markdown, one row per cell."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from wsgibench.results.compare import METHOD_NOTE, METRICS, CellChange, Comparison, summary_counts
from wsgibench.results.significance import Verdict


def _num(metric: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if metric == "rps_ok" else f"{value / 1000:.3f}"


def _p(v: Verdict | None) -> str:
    return "-" if v is None or v.p_value is None else f"{v.p_value:.3f}"


def _row(c: CellChange) -> list[str]:
    server = c.server
    if c.version_a != c.version_b:
        server += f" ({c.version_a or '-'} → {c.version_b or '-'})"
    out = [server, c.load, f"{c.level:g}"]
    for metric, _, _ in (METRICS[0], METRICS[2]):
        v = c.verdicts.get(metric)
        out += [
            _num(metric, v.median_a if v else None),
            _num(metric, v.median_b if v else None),
            v.change_pct if v else "-",
            _p(v),
        ]
    out += [c.outcome, f"{c.cell_a or '-'} / {c.cell_b or '-'}"]
    return out


HEADERS = [
    "server",
    "load",
    "level",
    "req/s A",
    "req/s B",
    "change",
    "p",
    "p99 ms A",
    "p99 ms B",
    "change",
    "p",
    "verdict",
    "cell A / B",
]


def print_table(result: Comparison, console: Console) -> None:
    console.print(f"[bold]A[/]: {result.a.describe()}", highlight=False)
    console.print(f"[bold]B[/]: {result.b.describe()}", highlight=False)
    if result.differences:
        console.print(
            "[yellow]forced: the two differ in " + "; ".join(result.differences) + "[/]",
            highlight=False,
        )
    table = Table()
    for i, h in enumerate(HEADERS):
        table.add_column(h, justify="left" if i in (0, 1, 11, 12) else "right")
    for c in result.cells:
        row = _row(c)
        outcome = row[11]
        style = (
            "green"
            if outcome.startswith("faster")
            else "red"
            if outcome.startswith("slower")
            else "yellow"
            if outcome.startswith("mixed")
            else None
        )
        if style:
            row[11] = f"[{style}]{outcome}[/]"
        table.add_row(*row)
    console.print(table)
    counts = summary_counts(result)
    console.print(
        "summary: " + ", ".join(f"{n} {what}" for what, n in counts.items()), highlight=False
    )
    console.print(METHOD_NOTE, highlight=False)


def markdown(result: Comparison) -> str:
    lines = [
        "## wsgibench compare",
        "",
        f"- A: {result.a.describe()}",
        f"- B: {result.b.describe()}",
    ]
    env = result.a.environment
    lines.append(
        f"- machine: {env.get('cpu_model')}, {env.get('cpu_count')} cores, "
        f"kernel {env.get('kernel')}; engine "
        f"{(env.get('engine') or {}).get('engine_version')}"
    )
    if result.differences:
        lines.append("- **forced**: the two differ in " + "; ".join(result.differences))
    lines += ["", "| " + " | ".join(HEADERS) + " |", "|---|---|" + "---:|" * 9 + "---|---|"]
    for c in result.cells:
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in _row(c)) + " |")
    lines += ["", METHOD_NOTE, ""]
    return "\n".join(lines)
