"""A tuning's trials as a table (`wsgibench tune`, and `show` of one of its rounds)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from wsgibench.cli.fit import Layout, print_table, terminal_width
from wsgibench.results.capacity_compare import CAPACITY_NOISE
from wsgibench.results.tuning import TrialRecord, TuneRecord


def print_tuning(console: Console, record: TuneRecord, path: Path | None = None) -> None:
    """The trials ranked (the last round first), what more threads did, the settings that broke
    the memory limit, the settings tied within noise of the best, and the winner (the cheapest
    of them) with its command line."""
    title = f"tune {record.label}: capacity within {record.budget}, best first"
    ranked = enumerate(record.ranked(), 1)
    rows = [dict(zip(TUNING_HEADS, tuning_row(i, t), strict=True)) for i, t in ranked]
    print_table(console, title, rows, TUNING_LAYOUT, terminal_width(console))
    for line in record.trends:
        console.print(line, highlight=False)
    if record.untried:
        shown = ", ".join(record.untried[:8]) + (", …" if len(record.untried) > 8 else "")
        console.print(
            f"not tried ({len(record.untried)}, the trial or time budget): {shown}",
            highlight=False,
        )
    for t in record.trials:
        if t.broke:
            console.print(f"  {t.setting} (round {t.round}): {t.broke}", highlight=False)
        elif t.limited:
            console.print(
                f"  {t.setting} (round {t.round}): at least {t.capacity or 0:,.0f} req/s, "
                f"the search stopped above it: {t.limited}",
                highlight=False,
            )
    if record.winner is None:
        why = (
            "every setting broke or could not run"
            if record.trials and all(t.broke for t in record.trials)
            else "no setting met the budget at the lowest rate tried"
        )
        console.print(why, highlight=False)
        return
    best = next(t for t in record.ranked() if t.setting == record.winner)
    where = f"; every trial stored in {path}" if path else ""
    bound = "at least " if best.limited else ""
    if len(record.tied) > 1:
        console.print(
            f"tied within noise with the highest capacity ({record.best}): "
            f"{', '.join(record.tied)} (their intervals overlap, each widened by the "
            f"±{CAPACITY_NOISE:.0%} one search lands from another); recommended: the cheapest of "
            "them, by CPU per request at capacity, then memory",
            highlight=False,
        )
    console.print(
        f"best: {record.winner}, {bound}{best.capacity or 0:,.0f} req/s within the budget "
        f"(stopped: {record.stopped}{where})",
        highlight=False,
    )
    console.print(f"  {record.command}", highlight=False, soft_wrap=True)
    if record.commands:
        console.print("each server's own best, by the same rule among its settings:")
        for setting, command in record.commands:
            console.print(f"{setting}:", highlight=False)
            console.print(f"  {command}", highlight=False, soft_wrap=True)


TUNING_HEADS = ("#", "setting", "round", "capacity req/s", "interval", "CPU µs/req", "MiB", "note")
TUNING_LAYOUT = Layout(
    key="setting",
    right=frozenset(("#", "round", "capacity req/s", "interval", "CPU µs/req", "MiB")),
    prose=frozenset(("note",)),
    order=("capacity req/s", "interval", "#", "round", "CPU µs/req", "MiB", "note"),
)


def tuning_row(i: int, t: TrialRecord) -> list[str]:
    return [
        str(i),
        t.setting,
        str(t.round),
        t.shown_capacity,
        f"{t.capacity or 0:,.0f}–{f'{t.above:,.0f}' if t.above else '?'}",
        f"{t.cpu_us:,.0f}" if t.cpu_us else "-",
        f"{t.rss_mib:,.0f}" if t.rss_mib else "-",
        t.note,
    ]
