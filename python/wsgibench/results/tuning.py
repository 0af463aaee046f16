"""What a `wsgibench tune` concluded, kept in its store beside the trials' cells: every trial's
capacity and interval, the settings that broke the memory limit, what more threads did, the
settings within noise of the best, and the winner (the cheapest of those) with its command line;
`show` and the report print it with the last round's study."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from wsgibench.results.store import Store

PREFIX = "tune:"


@dataclass(frozen=True)
class TrialRecord:
    setting: str  # "gunicorn-gthread w1 t8"
    round: int  # from 1
    capacity: float | None  # requests/s within the budget
    above: float | None
    cpu_us: float | None
    rss_mib: float | None
    broke: str | None = None
    limited: str | None = None  # the harness cut the search short: the capacity a lower bound

    @property
    def note(self) -> str:
        """What the ranking says beside the trial: it broke, or its capacity is a lower bound."""
        return self.broke or (f"a lower bound: {self.limited}" if self.limited else "")

    @property
    def shown_capacity(self) -> str:
        if not self.capacity:
            return "-"
        return f"{'≥ ' if self.limited else ''}{self.capacity:,.0f}"


@dataclass(frozen=True)
class TuneRecord:
    label: str
    budget: str
    studies: tuple[int, ...]  # the rounds' studies, in order
    trials: tuple[TrialRecord, ...]
    winner: str | None
    command: str | None
    stopped: str
    trends: tuple[str, ...] = field(default_factory=tuple)
    # The settings within noise of the highest capacity (the winner the cheapest of them), and
    # that highest one; () and None: a tuning stored before ties were.
    tied: tuple[str, ...] = field(default_factory=tuple)
    best: str | None = None
    # Per server tuned, its own winner and that one's command line (several servers: one each).
    commands: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    # The settings never tried (the trial or time budget), said with the ranking.
    untried: tuple[str, ...] = field(default_factory=tuple)

    def ranked(self) -> list[TrialRecord]:
        """The last round first, each round best first (capacity; then CPU per request)."""
        return sorted(
            self.trials,
            key=lambda t: (-t.round, -(t.capacity or 0.0), t.cpu_us or float("inf")),
        )


def save_tuning(store: Store, record: TuneRecord) -> None:
    store.put_meta(f"{PREFIX}{record.studies[-1]}", json.dumps(asdict(record)))


def tuning_of(store: Store, study_id: int) -> TuneRecord | None:
    """The tuning a study was a round of, if any."""
    for value in store.meta_values(PREFIX):
        raw: dict[str, Any] = json.loads(value)
        if study_id in raw.get("studies", []):
            return TuneRecord(
                label=raw["label"],
                budget=raw["budget"],
                studies=tuple(raw["studies"]),
                trials=tuple(TrialRecord(**t) for t in raw["trials"]),
                winner=raw.get("winner"),
                command=raw.get("command"),
                stopped=raw.get("stopped", ""),
                trends=tuple(raw.get("trends", ())),
                tied=tuple(raw.get("tied", ())),
                best=raw.get("best"),
                commands=tuple((str(s), str(c)) for s, c in raw.get("commands", ())),
                untried=tuple(raw.get("untried", ())),
            )
    return None
