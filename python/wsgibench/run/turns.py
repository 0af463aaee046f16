"""A cell's server starts run one at a time, and a level's cells taking turns start by start
(A, B, B, A, A, B, …), so that a drift of the machine over a level falls on every server alike."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Protocol, TypeVar

from wsgibench.results import deaths
from wsgibench.results.verdict import CellStatus
from wsgibench.run.admit import app_info, say_lifespan_unrun
from wsgibench.run.cell import CellContext, Prepared, one_start, prepare
from wsgibench.run.outcome import CellOutcome
from wsgibench.servers import Flavour
from wsgibench.study.plan import CellPlan


def run_cell(cell: CellPlan, ctx: CellContext) -> CellOutcome:
    """Prepare, then per server start (`CellPlan.shares`): start, check, measure and judge its
    share of the repeats, the server stopped whatever happens; the starts' outcomes as one."""
    run = CellRun(cell, ctx)
    while run.more():
        run.next_start()
    return run.finish()


class CellRun:
    """A cell's server starts run one at a time (`next_start`), so that a study can take turns
    between the cells of a level (run/study.py); `finish` gives the cell's outcome. `given` is an
    outcome known without starting anything (a server that left the sweep)."""

    def __init__(self, cell: CellPlan, ctx: CellContext, given: CellOutcome | None = None):
        self.cell, self.ctx, self.started = cell, ctx, time.time()
        self.ready = given if given is not None else prepare(cell, ctx)
        self.shares = cell.shares(ctx.study)
        self.outcome: CellOutcome | None = None
        self.k = self.first = 0

    def more(self) -> bool:
        """Whether the cell has a server start still to run."""
        if isinstance(self.ready, CellOutcome) or self.k == len(self.shares):
            return False  # refused, or every start run
        # disqualified, failed, or stopped early: no more starts
        return self.outcome is None or self.outcome.goes_on(self.first)

    def next_start(self) -> None:
        ready, k, count = self.ready, self.k, self.shares[self.k]
        assert isinstance(ready, Prepared)
        if k == 0:
            self.started = time.time()
        part = replace(self.cell, start=k, first_repeat=self.first, share=count)
        self.ctx.progress(f"{self.cell.label}: starting" + (f" (start {k + 1})" if k else ""))
        got = one_start(part, self.ctx, ready.recipe, ready.placement, ready.options, ready.db)
        self.outcome = self.outcome.join(got, k) if self.outcome is not None else got
        self.k, self.first = k + 1, self.first + count

    def finish(self) -> CellOutcome:
        """The cell's outcome: its starts' as one, with what its preparation says."""
        if isinstance(self.ready, CellOutcome):
            return self.ready
        assert self.outcome is not None
        return _finished(self.outcome, self.ready)


def _finished(outcome: CellOutcome, ready: Prepared) -> CellOutcome:
    """The notes of where the cell ran, its app and database; worker deaths made its status."""
    recipe, placement, app, db = ready.recipe, ready.placement, ready.app, ready.db
    outcome.app = app_info(app, recipe, ready.deps)
    outcome.notes += placement.notes()
    if outcome.isolation and outcome.isolation.get("websocket_library"):
        outcome.notes.append(f"WebSocket: {outcome.isolation['websocket_library']}")
    if db is not None:  # show and reports print notes; the details are in isolation.database
        outcome.notes.append(f"database: {db.version()}")
    say_lifespan_unrun(outcome, recipe, app)
    if (note := deaths.cell_note(outcome.isolation, outcome.repeats)) is not None:
        outcome.notes.append(note)
        if outcome.status == CellStatus.MEASURED:  # its warm-up or checks saw them: not clean
            outcome.status, outcome.reason = CellStatus.DEATHS, note
    if recipe.flavour == Flavour.REFERENCE:  # `show` has no flavour column
        outcome.notes.append(str(Flavour.REFERENCE))
    return outcome


class Turn(Protocol):
    def more(self) -> bool: ...
    def next_start(self) -> None: ...


T = TypeVar("T", bound=Turn)


def take_turns(runs: Iterable[T]) -> Iterator[T]:
    """Each run's next server start in turn, the order reversed every round (A, B, then B, A) so
    that neither side is always the later; a run is given back as soon as it has no start left
    (the caller stores it: an interrupt loses only the cells still taking turns)."""
    waiting, forward = list(runs), True
    while waiting:
        for run in list(waiting if forward else reversed(waiting)):
            if run.more():
                run.next_start()
            if not run.more():
                waiting.remove(run)
                yield run
        forward = not forward
