"""`show`'s table per request kind, for a load with several kinds (a mix of [[requests]], a
replayed log): under the load's table, each server's kinds with their requests, valid replies
per second, latency percentiles and errors by class; as a terminal table or Markdown."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.console import Console

from wsgibench.cli.fit import Layout, print_table
from wsgibench.report.format import ms, pct, whole
from wsgibench.results.kind_figures import KindFigures, kind_figures, several_kinds
from wsgibench.results.store import Store

HEADS = ("server", "kind", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "errors", "classes")
LEFT = ("server", "kind", "classes")
NOTE = (
    "per kind: requests over the repeats, req/s and latency the median over the repeats "
    "(latency corrected for open loads), errors a share of the kind's requests"
)


def figures_by_cell(store: Store, cell_ids: Iterable[int]) -> dict[int, list[KindFigures]]:
    """Each cell's figures per kind, for the cells whose load has several kinds."""
    out = {}
    for cell_id in cell_ids:
        results = [r.engine for r in store.stored_repeats(cell_id)]
        if several_kinds(results):
            out[cell_id] = kind_figures(results)
    return out


def rows(
    cells: Iterable[tuple[str, int]], figures: Mapping[int, list[KindFigures]]
) -> list[list[str]]:
    """The table's rows: each (server, cell id) in order, its kinds in the plan's order."""
    out = []
    for server, cell_id in cells:
        for i, k in enumerate(figures.get(cell_id, ())):
            out.append(
                [
                    server if i == 0 else "",
                    k.name,
                    f"{k.sent:,}",
                    whole(k.rps_ok),
                    ms(k.p50_us, ".2f"),
                    ms(k.p90_us, ".2f"),
                    ms(k.p99_us, ".2f"),
                    pct(k.error_rate),
                    k.classes_text() or "-",
                ]
            )
    return out


KINDS_LAYOUT = Layout(
    key="server",
    right=frozenset(h for h in HEADS if h not in LEFT),
    prose=frozenset(("classes",)),
    order=("kind", "req/s", "p99 ms", "errors", "requests", "p50 ms", "p90 ms"),
)


def print_kinds(
    console: Console,
    title: str,
    cells: list[tuple[str, int]],
    figures: Mapping[int, list[KindFigures]],
    width: int | None,
) -> None:
    """The per-kind table under a load's (every figure whole at `width`: cli/fit.py)."""
    found = rows(cells, figures)
    if not found:
        return
    table = [dict(zip(HEADS, r, strict=True)) for r in found]
    print_table(console, f"{title} · per request kind", table, KINDS_LAYOUT, width)
    console.print(NOTE, width=width, highlight=False)


def markdown_kinds(
    title: str, cells: list[tuple[str, int]], figures: Mapping[int, list[KindFigures]]
) -> list[str]:
    found = rows(cells, figures)
    if not found:
        return []
    lines = [f"#### {title} · per request kind", "", "| " + " | ".join(HEADS) + " |"]
    lines.append("|" + "|".join("---" if h in LEFT else "---:" for h in HEADS) + "|")
    lines += ["| " + " | ".join(v.replace("|", "\\|") for v in r) + " |" for r in found]
    return [*lines, "", NOTE + ".", ""]
