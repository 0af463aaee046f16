"""`show`'s capacity table: per capacity load each server's capacity within the budget, best
first (the report's table, report/capacity.py), every figure whole at the terminal's width."""

from __future__ import annotations

from rich.console import Console

from wsgibench.cli.fit import Layout, print_table
from wsgibench.report.capacity import holds
from wsgibench.report.capacity import row as capacity_row
from wsgibench.results.capacity_read import ServerCapacity

CAPACITY_LAYOUT = Layout(
    key="server",
    right=frozenset(
        (
            "capacity req/s",
            "capacity (× the log)",
            "interval",
            "errors from",
            "CPU µs/req 50%",
            "CPU µs/req 100%",
            "MiB",
        )
    ),
    prose=frozenset(("stopped",)),
    order=("capacity req/s", "capacity (× the log)", "interval", "stopped", "errors from"),
)
CAPACITY_HEADS = (
    "server",
    "capacity req/s",
    "interval",
    "errors from",
    "CPU µs/req 50%",
    "CPU µs/req 100%",
    "MiB",
    "workers",
    "stopped",
)


def capacity_rows(rows: list[ServerCapacity]) -> list[dict[str, str]]:
    """The table's rows of one load's servers, as text (a replay's capacity × the log)."""
    heads = (CAPACITY_HEADS[0], "capacity (× the log)", *CAPACITY_HEADS[2:])
    named = heads if rows and rows[0].replay else CAPACITY_HEADS
    return [dict(zip(named, capacity_row(c).cells(), strict=True)) for c in rows]


def capacity_table(console: Console, found: list[ServerCapacity], width: int | None) -> None:
    """Per capacity load: each server's capacity within the budget, best first (the report's
    capacity table, report/capacity.py, in a terminal's columns: every figure whole)."""
    for load in sorted({c.load for c in found}):
        rows = sorted((c for c in found if c.load == load), key=lambda c: -(c.result.capacity or 0))
        title = f"{load} · capacity within {rows[0].budget.describe()}"
        print_table(console, title, capacity_rows(rows), CAPACITY_LAYOUT, width)
        if holds(rows):
            console.print(holds(rows) + ".", width=width, highlight=False)
