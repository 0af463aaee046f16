"""Tables that never cut a figure: each column as wide as its widest cell, and a table too wide
for the terminal split into parts that each repeat the key column, the least important columns
in the later parts; only the prose columns (notes, reasons) wrap. A file gets one table, whole."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

# What a column costs beside its text: the border and a space each side.
_PER_COLUMN = 3
_EDGE = 1
# A prose column is given at least this much room before it wraps.
_PROSE_MIN = 24


@dataclass(frozen=True)
class Layout:
    """How a table's columns are laid out: `key` starts every part; `right` columns are figures
    (right-aligned); `prose` columns may wrap (notes, reasons); `order` is the importance of the
    others, most important first (columns not named keep the rows' order after them)."""

    key: str
    right: frozenset[str] = frozenset()
    prose: frozenset[str] = frozenset()
    order: tuple[str, ...] = ()


@dataclass
class Part:
    heads: list[str]
    width: int
    continued: bool = False
    prose_width: dict[str, int] = field(default_factory=dict)


def _natural(head: str, rows: Sequence[dict[str, str]]) -> int:
    return max([cell_len(head), *(cell_len(r.get(head, "")) for r in rows)])


def _least(head: str, rows: Sequence[dict[str, str]]) -> int:
    """A prose column's narrowest: its longest word, at least _PROSE_MIN (or its natural width)."""
    longest = max([cell_len(w) for r in rows for w in r.get(head, "").split()] or [0])
    return min(_natural(head, rows), max(_PROSE_MIN, longest, cell_len(head)))


def plan_parts(
    heads: Sequence[str], rows: Sequence[dict[str, str]], layout: Layout, width: int | None
) -> list[Part]:
    """The parts a table is printed in at `width` (None: one part, as wide as it needs)."""
    ordered = [h for h in layout.order if h in heads and h != layout.key]
    ordered += [h for h in heads if h not in ordered and h != layout.key]
    need = {h: _natural(h, rows) for h in heads}
    least = {h: _least(h, rows) if h in layout.prose else need[h] for h in heads}
    if width is None:
        whole = [h for h in heads if h == layout.key or h in ordered]
        return [Part(whole, _total(need, whole))]
    parts: list[Part] = []
    current = [layout.key]
    for head in ordered:
        if _total(least, [*current, head]) > width and len(current) > 1:
            parts.append(Part(current, width))
            current = [layout.key]
        current.append(head)
    parts.append(Part(current, width))
    for i, part in enumerate(parts):
        part.continued = i > 0
        # the columns back in the rows' order within a part
        part.heads = [h for h in heads if h in part.heads]
        spare = width - _total(least, part.heads)
        for h in (h for h in part.heads if h in layout.prose):
            part.prose_width[h] = least[h] + max(0, min(spare, need[h] - least[h]))
            spare -= part.prose_width[h] - least[h]
        part.width = max(width, _total(least, part.heads))
    return parts


def _total(widths: dict[str, int], heads: Sequence[str]) -> int:
    return sum(widths[h] + _PER_COLUMN for h in heads) + _EDGE


def print_table(
    console: Console,
    title: str,
    rows: Sequence[dict[str, str]],
    layout: Layout,
    width: int | None = None,
) -> None:
    """Print `rows` (all with the same keys) as one table, or as parts at `width` (a terminal's;
    None: whole), every figure whole."""
    if not rows:
        return
    heads = list(rows[0])
    for part in plan_parts(heads, rows, layout, width):
        more = " (continued)"
        table = Table(title=title + (more if part.continued else ""), title_justify="left")
        for head in part.heads:
            prose = head in layout.prose
            table.add_column(
                head,
                justify="right" if head in layout.right else "left",
                no_wrap=not prose,
                overflow="fold",
                min_width=None if prose else _natural(head, rows),
                max_width=part.prose_width.get(head),
            )
        for r in rows:  # as text: a cell may quote the app (a reason), never markup
            table.add_row(*(Text(r.get(h, "")) for h in part.heads))
        _print_at(console, table, part.width)


def _print_at(console: Console, table: Table, width: int) -> None:
    """Print at `width` columns even past the console's own (rich caps a print's width at it):
    a file's table is as wide as its figures need."""
    if width <= console.width:
        console.print(table, width=width)
        return
    was = console.width
    console.width = width
    try:
        console.print(table, crop=False)
    finally:
        console.width = was


def terminal_width(console: Console) -> int | None:
    """The width tables are fitted to: the terminal's, or None for a file or a pipe (whole)."""
    return console.width if console.is_terminal else None
