"""`show`'s tables beyond the cells, in every format: each capacity load's capacities and (with
--steps, or always in JSON and CSV) its steps, the tuning a study was a round of, and the
verdicts against the study's seed; as terminal tables that never cut a figure, Markdown, and the
rows of values JSON and CSV carry (cli/show_data.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from rich.console import Console

from wsgibench.cli.capacity_table import capacity_rows, capacity_table
from wsgibench.cli.fit import Layout, print_table
from wsgibench.cli.show_data import (
    Row,
    Tables,
    capacity_values,
    markdown,
    step_values,
    tuning_values,
)
from wsgibench.cli.tuning_table import TUNING_HEADS, print_tuning, tuning_row
from wsgibench.report.capacity import LEGEND, amount
from wsgibench.results.capacity_read import ServerCapacity, read_capacities
from wsgibench.results.seed_claims import claims
from wsgibench.results.store import Store
from wsgibench.results.tuning import TuneRecord, tuning_of

STEPS_LAYOUT = Layout(
    key="server",
    right=frozenset(("step", "offered", "p99 ms", "errors")),
    prose=frozenset(("why",)),
    order=("step", "offered", "verdict", "why"),
)
SEED_HEADS = ("claim", "the seed says", "the seed", "here", "verdict", "why")
SEED_LAYOUT = Layout(
    key="claim",
    prose=frozenset(("claim", "the seed says", "why", "here", "the seed")),
    order=("verdict", "here", "the seed", "why", "the seed says"),
)


@dataclass
class More:
    """What a study has beyond its cells, read once when asked."""

    store: Store
    study_id: int
    name: str
    searched: bool  # it has capacity loads
    steps: bool = False  # --steps: a capacity load's steps in the terminal and Markdown too
    rows: dict[str, list[Row]] = field(default_factory=dict)

    @cached_property
    def capacities(self) -> list[ServerCapacity]:
        return read_capacities(self.store, self.study_id) if self.searched else []

    @cached_property
    def tuning(self) -> TuneRecord | None:
        return tuning_of(self.store, self.study_id)

    @cached_property
    def seed(self) -> list[dict[str, str]]:
        """The verdicts against the seed, as text (none: the study has no seed)."""
        if claims(self.name) is None:
            return []
        from wsgibench.report.data import load_report_data
        from wsgibench.report.seed import against_seed

        section = against_seed(load_report_data(self.store, self.study_id))
        if section is None:
            return []
        return [
            dict(
                zip(
                    SEED_HEADS,
                    (v.claim.what, v.claim.quoted, v.theirs, v.ours, v.verdict, v.sentence),
                    strict=True,
                )
            )
            for v in section.verdicts
        ]

    def into(self, tables: Tables) -> None:
        """Every table as values, for JSON and CSV."""
        tables.add("capacity", [capacity_values(c) for c in self.capacities])
        tables.add("steps", [r for c in self.capacities for r in step_values(c)])
        if self.tuning is not None:
            tables.add("tuning", tuning_values(self.tuning))
            tables.tuning = self.tuning
        tables.add("seed", self.seed)

    def print(self, console: Console, width: int | None) -> None:
        """The terminal's tables: tuning, capacity, steps (--steps), against the seed."""
        if self.tuning is not None:
            print_tuning(console, self.tuning)
        if self.capacities:
            capacity_table(console, self.capacities, width)
        if self.steps:
            for load, rows in step_rows(self.capacities).items():
                print_table(console, f"{load} · the search's steps", rows, STEPS_LAYOUT, width)
                console.print(LEGEND, width=width, highlight=False)
        if self.seed:
            print_table(console, f"{self.name} against its seed", self.seed, SEED_LAYOUT, width)

    def markdown(self) -> list[str]:
        lines: list[str] = []
        if self.tuning is not None:
            ranked = enumerate(self.tuning.ranked(), 1)
            rows = [dict(zip(TUNING_HEADS, tuning_row(i, t), strict=True)) for i, t in ranked]
            lines += markdown(f"tune {self.tuning.label}", rows)
        for load in dict.fromkeys(c.load for c in self.capacities):
            found = sorted(
                (c for c in self.capacities if c.load == load),
                key=lambda c: -(c.result.capacity or 0),
            )
            title = f"{load} · capacity within {found[0].budget.describe()}"
            lines += markdown(title, capacity_rows(found))
        if self.steps:
            for load, steps in step_rows(self.capacities).items():
                lines += markdown(f"{load} · the search's steps", steps)
        return lines + markdown(f"{self.name} against its seed", self.seed)


def step_rows(found: list[ServerCapacity]) -> dict[str, list[dict[str, str]]]:
    """Per capacity load, each server's steps as text: the offered rate, met or missed, why."""
    out: dict[str, list[dict[str, str]]] = {}
    for c in found:
        for r in step_values(c):
            out.setdefault(c.load, []).append(
                {
                    "server": c.server if r["step"] == 1 else "",
                    "step": str(r["step"]),
                    "offered": amount(c, c.result.steps[r["step"] - 1].rate),
                    "verdict": f"{r['mark']} {r['verdict']}",
                    "why": str(r["why"] or ""),
                }
            )
    return out
