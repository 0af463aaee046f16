"""`show --wide`: the wrong replies each cell quoted (the first of each error class per request
kind: its status, head and first body bytes, and what was wrong), printed as text: every control
character escaped and no markup read, since the bytes are the app's."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from wsgibench.results.summary import CellSummary
from wsgibench.results.wrong_replies import escaped, terminal_lines


def print_quoted(console: Console, cells: Sequence[CellSummary], width: int | None) -> None:
    """Under a load's table: each cell's quoted wrong replies, cell by cell."""
    for s in cells:
        if not s.wrong_replies:
            continue
        console.print(
            f"  {escaped(s.cell.server)}: the first wrong reply of each class, as received:",
            markup=False,
            highlight=False,
            width=width,
        )
        for w in s.wrong_replies:
            for line in terminal_lines(w):
                console.print(f"    {line}", markup=False, highlight=False, width=width)
