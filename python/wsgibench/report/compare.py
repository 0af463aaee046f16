"""Render a comparison of two stores: a terminal table and Markdown, one row per cell, and one
per capacity load and server (its capacity in A and B, changed only beyond their uncertainties)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from wsgibench.report import format as fmt
from wsgibench.report.capacity import interval
from wsgibench.results.capacity_compare import CAPACITY_NOISE, CapacityChange
from wsgibench.results.capacity_read import ServerCapacity
from wsgibench.results.compare import (
    METRICS,
    CellChange,
    Comparison,
    method_note,
    package_differences,
    summary_counts,
)
from wsgibench.results.kind_compare import KindChange


def _num(metric: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if metric == "rps_ok" else f"{value / 1000:.3f}"


def _p(p: float | None) -> str:
    return "-" if p is None else f"{p:.3f}"


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
            _p(c.adjusted.get(metric)),
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


WIDTH = 120
# The terminal table: per load and level, so these columns are enough within 120 characters.
TERMINAL = [h for h in HEADERS if h not in ("load", "level", "cell A / B")]


def _style(outcome: str) -> str:
    colour = (
        "green"
        if outcome.startswith("improved")
        else "red"
        if outcome.startswith("regressed")
        else "yellow"
        if outcome.startswith("mixed")
        else None
    )
    return f"[{colour}]{outcome}[/]" if colour else outcome


def _groups(result: Comparison) -> dict[tuple[str, float], list[CellChange]]:
    """Matched cells by load and level (in order), servers by B's throughput, best first."""
    found: dict[tuple[str, float], list[CellChange]] = {}
    for c in result.cells:
        if c.matched:
            found.setdefault((c.load, c.level), []).append(c)
    for cells in found.values():
        cells.sort(key=lambda c: -((v := c.verdicts.get("rps_ok")) and v.median_b or 0.0))
    return dict(sorted(found.items()))


def one_sided(result: Comparison) -> list[str]:
    """Cells present on one side only: one line per server and side."""
    where: dict[tuple[str, str], list[str]] = {}
    for c in result.cells:
        if not c.matched:
            side = "A" if c.status_b is None else "B"
            where.setdefault((c.server, side), []).append(f"{c.load} {c.level:g}")
    return [
        f"{server}: only in {side} ({', '.join(cells)})"
        for (server, side), cells in sorted(where.items())
    ]


CAPACITY_HEADERS = [
    "server",
    "A req/s",
    "A interval",
    "B req/s",
    "B interval",
    "change",
    "verdict",
]
CAPACITY_NOTE = (
    "Capacity: the highest offered rate (requests/s) whose repeats together kept the budget; its "
    "interval runs to the lowest rate above it that missed. Its uncertainty is that interval "
    f"widened by ±{CAPACITY_NOISE:.0%} on each side, how far one search lands from another of "
    "the same server (docs/measurement.md): improved or regressed only when A's and B's do not "
    "overlap; apart, but only within that noise, is a change within noise. The change is B's "
    "capacity against A's, by value."
)


def _side(c: ServerCapacity | None) -> list[str]:
    return ["-", "-"] if c is None else [fmt.rps(c.requests(c.result.capacity)), interval(c)]


def capacity_row(c: CapacityChange) -> list[str]:
    change = "-" if c.change is None else f"{c.change:+.1%}"
    return [c.server, *_side(c.a), *_side(c.b), change, c.verdict]


def _capacity_style(verdict: str) -> str:
    colour = {"improved: higher": "green", "regressed: lower": "red"}.get(verdict)
    return f"[{colour}]{verdict}[/]" if colour else verdict


def _capacity_groups(result: Comparison) -> dict[str, list[CapacityChange]]:
    """Per capacity load (in order), its servers by B's capacity, best first."""
    found: dict[str, list[CapacityChange]] = {}
    for c in result.capacities:
        found.setdefault(c.load, []).append(c)
    for changes in found.values():
        changes.sort(key=lambda c: -((c.b and c.b.requests(c.b.result.capacity)) or 0.0))
    return dict(sorted(found.items()))


def _budget(changes: list[CapacityChange]) -> str:
    either = next((s for c in changes for s in (c.b, c.a) if s is not None), None)
    return either.budget.describe() if either else "-"


def print_capacities(result: Comparison, console: Console) -> None:
    for load, changes in _capacity_groups(result).items():
        table = Table(title=f"{load} · capacity within {_budget(changes)}", title_justify="left")
        for i, h in enumerate(CAPACITY_HEADERS):
            table.add_column(h, justify="left" if i in (0, 6) else "right", overflow="fold")
        for c in changes:
            *row, verdict = capacity_row(c)
            table.add_row(*row, _capacity_style(verdict))
        console.print(table, width=WIDTH)
    if result.capacities:
        counts: dict[str, int] = {}
        for c in result.capacities:
            key = c.verdict.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
        said = ", ".join(f"{n} {what}" for what, n in counts.items())
        console.print(f"capacities: {said}", highlight=False, width=WIDTH)
        console.print(CAPACITY_NOTE, highlight=False, width=WIDTH)


def capacity_markdown(result: Comparison) -> list[str]:
    if not result.capacities:
        return []
    lines = [
        "### Capacities",
        "",
        "| load | budget | " + " | ".join(CAPACITY_HEADERS) + " | cell A / B |",
        "|---|---|---|" + "---:|" * 5 + "---|---|",
    ]
    for load, changes in _capacity_groups(result).items():
        for c in changes:
            proof = [s.result.proof if s else None for s in (c.a, c.b)]
            cells = [load, _budget([c]), *capacity_row(c), " / ".join(str(p or "-") for p in proof)]
            lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return [*lines, "", CAPACITY_NOTE, ""]


KIND_HEADS = (
    "server",
    "load",
    "level",
    "kind",
    "req/s A",
    "req/s B",
    "p99 ms A",
    "p99 ms B",
    "p",
    "verdict",
)
KIND_NOTE = (
    "per kind: the median over each side's repeats of the kind's valid replies a second and its "
    "p99, A's server starts against B's as for the cells (p: of the p99s, Benjamini–Hochberg "
    "adjusted over every kind's test)"
)


def kind_row(k: KindChange) -> list[str]:
    rps, p99 = k.rps, k.p99
    return [
        k.server,
        k.load,
        f"{k.level:g}",
        k.kind,
        _num("rps_ok", rps.median_a if rps else None),
        _num("rps_ok", rps.median_b if rps else None),
        _num("latency_p99_us", p99.median_a if p99 else None),
        _num("latency_p99_us", p99.median_b if p99 else None),
        _p(k.p99_adjusted),
        k.outcome,
    ]


def print_kinds(result: Comparison, console: Console) -> None:
    if not result.kinds:
        return
    table = Table(title="per request kind", title_justify="left")
    for h in KIND_HEADS:
        table.add_column(
            h, justify="left" if h in ("server", "load", "kind", "verdict") else "right"
        )
    for k in result.kinds:
        *row, verdict = kind_row(k)
        table.add_row(*row, _style(verdict))
    console.print(table, width=WIDTH)
    console.print(KIND_NOTE, highlight=False, width=WIDTH)


def kinds_markdown(result: Comparison) -> list[str]:
    if not result.kinds:
        return []
    lines = ["### Per request kind", "", "| " + " | ".join(KIND_HEADS) + " |"]
    lines.append("|---|---|---:|---|" + "---:|" * 5 + "---|")
    lines += [
        "| " + " | ".join(x.replace("|", "\\|") for x in kind_row(k)) + " |" for k in result.kinds
    ]
    return [*lines, "", KIND_NOTE + ".", ""]


# Two runs that served different apps or requests: their changes are not a server's.
SERVED = "served different things (the changes below are between them, not a server's):"


def print_table(result: Comparison, console: Console) -> None:
    console.print(f"[bold]A[/]: {result.a.describe()}", highlight=False, width=WIDTH)
    console.print(f"[bold]B[/]: {result.b.describe()}", highlight=False, width=WIDTH)
    if result.differences:
        console.print(
            "[yellow]forced: the two differ in " + "; ".join(result.differences) + "[/]",
            highlight=False,
            width=WIDTH,
        )
    if result.served:
        console.print(
            f"[yellow]{SERVED}[/] " + "; ".join(result.served), highlight=False, width=WIDTH
        )
    for (load, level), cells in _groups(result).items():
        table = Table(title=f"{load} · {level:g}", title_justify="left")
        for i, h in enumerate(TERMINAL):
            table.add_column(h, justify="left" if i in (0, 9) else "right", overflow="fold")
        for c in cells:
            row = _row(c)
            table.add_row(row[0], *row[3:11], _style(c.outcome))
        console.print(table, width=WIDTH)
    for line in one_sided(result):
        console.print(line, highlight=False, width=WIDTH)
    for server, changes in package_differences(result).items():
        console.print(
            f"[yellow]packages differ[/] for {server}: {'; '.join(changes)}",
            highlight=False,
            width=WIDTH,
        )
    print_kinds(result, console)
    print_capacities(result, console)
    if not result.cells:  # capacity loads alone: nothing compared cell by cell
        return
    counts = summary_counts(result)
    console.print(
        "summary: " + ", ".join(f"{n} {what}" for what, n in counts.items()),
        highlight=False,
        width=WIDTH,
    )
    console.print(method_note(result), highlight=False, width=WIDTH)


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
    if result.served:
        lines.append(f"- **{SERVED}** " + "; ".join(result.served))
    lines.append("")
    if result.cells:
        lines += ["| " + " | ".join(HEADERS) + " |", "|---|---|" + "---:|" * 9 + "---|---|"]
        for c in result.cells:
            lines.append("| " + " | ".join(x.replace("|", "\\|") for x in _row(c)) + " |")
        lines += ["", method_note(result), ""]
    lines += kinds_markdown(result)
    lines += capacity_markdown(result)
    return "\n".join(lines)
