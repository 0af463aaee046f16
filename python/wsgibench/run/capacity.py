"""A capacity load's searches, their steps taken in turn server by server (A, B, then B, A): the
search (results/capacity.py) chooses each offered rate, each step is a cell run and stored like
any other and judged against the budget on its repeats together (results/capacity_step.py; the
verdict is a note on the cell), on one server start (a step is judged against the budget, not
against another server); then the cells at 25, 50 and 75 % of the capacity found, for CPU per
request across the range. A step the machine limited and the search runs again takes its cell's
place, which its notes say (RERUN_NOTE). A resumed run reads the steps it already stored instead
of running them again."""

from __future__ import annotations

import random
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import count

from wsgibench.results.capacity import (
    COST_NOTE,
    RERUN_NOTE,
    STEP_NOTE,
    Budget,
    CapacityResult,
    Search,
    Step,
    cost_rates,
)
from wsgibench.results.capacity_step import step_of, verdict_known
from wsgibench.results.repeat import Repeat
from wsgibench.results.verdict import CellStatus
from wsgibench.run.turns import take_turns
from wsgibench.study.loads import CapacitySpec, Load
from wsgibench.study.model import Study
from wsgibench.study.plan import CellPlan


def step_repeats(load: Load, study: Study) -> int:
    """The most repeats a step of the load's search runs: its `step_repeats`, at least the
    study's repeats."""
    assert load.capacity is not None
    return max(load.capacity.step_repeats, study.repeats)


def budget_of(spec: CapacitySpec, study: Study) -> Budget:
    rate = spec.max_error_rate if spec.max_error_rate is not None else study.error_threshold
    return Budget(spec.slo_p99_ms, spec.slo_p50_ms, rate, spec.per_kind)


def unit_rps(load: Load) -> float | None:
    """A replay's requests a second at speed 1 (its log's mean rate): a speed's offered load is
    the speed times this; None for a rate, whose offered load is the rate times its calls."""
    return load.replay.traffic().mean_rps if load.replay is not None else None


@dataclass(frozen=True)
class Measured:
    """What running (or finding stored) one cell gives the search."""

    status: CellStatus
    reason: str | None
    repeats: Sequence[Repeat]
    cell_id: int | None = None


# What to note on a cell once it ran (before it is stored): its verdict as a step.
NoteOf = Callable[[CellStatus, str | None, Sequence[Repeat]], list[str]]
RunCell = Callable[[CellPlan, NoteOf], Measured]


# One server's search as it goes: it gives each step's cell (its position still to be given)
# and the note for it, is sent what running that cell gave, and returns the server's capacity.
Steps = Generator[tuple[CellPlan, NoteOf], Measured, CapacityResult]


def search_server(
    load: Load, server: str, study: Study, run: RunCell, position: int
) -> tuple[CapacityResult, int]:
    """The capacity of one server on a capacity load, and the next free position."""
    (result,), position = search_servers(load, [server], study, run, position)
    return result, position


def search_servers(
    load: Load, servers: list[str], study: Study, run: RunCell, position: int
) -> tuple[list[CapacityResult], int]:
    """The capacities of the servers on a capacity load, their searches taking turns step by step
    as a level's cells take their starts (run/turns.py), so that a drift of the machine falls on
    every search alike; and the next free position."""
    positions = count(position)
    searches = [_SearchTurn(search_steps(load, s, study), run, positions) for s in servers]
    for _ in take_turns(searches):
        pass
    return [s.result for s in searches if s.result is not None], next(positions)


class _SearchTurn:
    """One server's search as a turn (run/turns.py): each turn runs its next step, at the next
    position of those the searches share."""

    def __init__(self, steps: Steps, run: RunCell, positions: Iterator[int]):
        self.steps, self.run, self.positions = steps, run, positions
        self.result: CapacityResult | None = None
        self.pending: tuple[CellPlan, NoteOf] | None = None
        self._send(None)

    def _send(self, measured: Measured | None) -> None:
        try:
            self.pending = self.steps.send(measured)  # type: ignore[arg-type]
        except StopIteration as done:
            self.pending, self.result = None, done.value

    def more(self) -> bool:
        return self.pending is not None

    def next_start(self) -> None:
        assert self.pending is not None
        cell, note = self.pending
        self._send(self.run(replace(cell, position=next(self.positions)), note))


def search_steps(load: Load, server: str, study: Study) -> Steps:
    """One server's search, step by step (`Steps`); then its cost cells."""
    spec = load.capacity
    assert spec is not None
    budget = budget_of(spec, study)
    calls, unit = int(load.params.get("calls", 1)), unit_rps(load)
    search = Search(
        spec.start_rate, spec.resolution, spec.max_rate, spec.min_rate, second=spec.second_rate
    )
    repeats = step_repeats(load, study)
    while (rate := search.next_rate()) is not None:
        first = search.steps[-1] if search.steps and search.steps[-1].rate == rate else None
        again = (f"{RERUN_NOTE} ({first.reason})",) if first is not None else ()

        def note(
            status: CellStatus,
            reason: str | None,
            reps: Sequence[Repeat],
            at: float = rate,
            said: tuple[str, ...] = again,
        ) -> list[str]:
            step = step_of(at, status, reason, reps, budget, calls, unit)
            return [*said, step_note(step, budget)]

        def stop_at(reps: Sequence[Repeat], offered: float = rate * (unit or calls)) -> str:
            return verdict_known(reps, budget, offered, repeats, calls)

        replaces = first.cell_id if first is not None else None
        if first is not None:  # its cell makes way for the rerun's: what it was, said there
            search.steps[-1] = replace(first, cell_id=None)
        cell = CellPlan(-1, server, load, rate, repeats, 1, stop_at=stop_at, replaces=replaces)
        measured = yield cell, note
        step = step_of(
            rate, measured.status, measured.reason, measured.repeats, budget, calls, unit
        )
        search.record(replace(step, cell_id=measured.cell_id))
    result = search.result()
    if result.capacity is not None and result.invalid is None and spec.cost_cells:
        for rate in cost_rates(result.capacity, [s.rate for s in search.steps]):
            yield CellPlan(-1, server, load, rate, starts=1), lambda *_: [COST_NOTE]
    return result


def step_note(step: Step, budget: Budget) -> str:
    return f"{STEP_NOTE} ({budget.describe()}): {step.status}, {step.reason}"


def servers_in_order(load: Load, study: Study) -> list[str]:
    """The load's servers, shuffled as the study's other cells are (seed 004)."""
    servers = list(study.servers_of(load))
    if study.random_order:
        random.Random(f"{study.seed}:{load.name}").shuffle(servers)
    return servers
