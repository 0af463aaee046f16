"""Where a running study is: a progress bar on a terminal; elsewhere (CI logs, files) one line per
cell with its figures and status; both with the time left, estimated from the plan."""

from __future__ import annotations

import statistics
import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from wsgibench.results.capacity import COST_NOTE, COST_SHARES, STEP_NOTE
from wsgibench.results.verdict import CellStatus
from wsgibench.run.capacity import step_repeats, unit_rps
from wsgibench.run.outcome import CellOutcome
from wsgibench.study.loads import Load
from wsgibench.study.model import Study
from wsgibench.study.plan import CellPlan

START_S = 2.0  # starting, checking and stopping a server: a rough allowance per cell
# A capacity search's cells are chosen as it runs: about this many steps per server (doubling
# and bisection; seeded with an earlier search's interval, bracketing and bisection), and the cost
# cells after it.
SEARCH_STEPS, SEEDED_STEPS = 9, 4


def capacity_cells(load: Load) -> int:
    """About how many cells one server's search of a capacity load runs, its cost cells
    included."""
    spec = load.capacity
    assert spec is not None
    steps = SEEDED_STEPS if spec.second_rate is not None else SEARCH_STEPS
    return steps + (len(COST_SHARES) if spec.cost_cells else 0)


def planned_seconds(study: Study, cell: CellPlan) -> float:
    """What the plan says a cell takes: its repeats, and per server start its warm-up, start
    and stop."""
    load = cell.load
    repeats = cell.repeats or study.repeats
    starts = cell.start_count(study)
    return starts * (START_S + load.warmup_s) + repeats * (load.nominal_seconds() + 0.5)


def plural(n: int, word: str) -> str:
    """'1 repeat', '3 repeats'."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class CellProgress:
    """Call start(), then cell_done() after each cell, and stop()."""

    def __init__(self, console: Console, study: Study, cells: list[CellPlan]):
        self.console, self.study, self.cells = console, study, cells
        self.planned = {c.position: planned_seconds(study, c) for c in cells}
        self.left_s = sum(self.planned.values())
        # The capacity loads' cells, estimated: the bar's total and the time left count them.
        # A step runs up to its own repeats (fewer when it misses): an estimate from above.
        searched = [
            CellPlan(0, s, load, load.capacity.start_rate, step_repeats(load, study), 1)
            for load in study.loads
            if load.capacity is not None
            for s in study.servers_of(load)
        ]
        self.estimated = sum(capacity_cells(c.load) for c in searched)
        self._step_repeats = max((c.repeats or 0 for c in searched), default=0)
        self.left_s += sum(planned_seconds(study, c) * capacity_cells(c.load) for c in searched)
        self.done = 0
        self.actual_s = self.expected_s = 0.0
        self.started = time.monotonic()
        self.bar: Progress | None = None
        self.task: Any = None

    @property
    def total(self) -> str:
        """The cells planned, and '~' before them when capacity searches add an estimate."""
        if not self.estimated:
            return str(len(self.cells))
        return f"~{max(len(self.cells) + self.estimated, self.done)}"

    @property
    def _starts(self) -> int:
        return self.cells[0].start_count(self.study)

    @property
    def interactive(self) -> bool:
        return self.console.is_terminal

    def start(self) -> None:
        self.console.print(
            f"[bold]{self.study.name}[/]: {plural(len(self.study.servers), 'server')}, "
            f"{plural(len(self.cells), 'cell')}"
            + (f" and about {self.estimated} capacity steps" if self.estimated else "")
            + f", {plural(self.study.repeats, 'repeat')} each"
            + (f" over {plural(self._starts, 'server start')}" if self.cells else "")
            + (f" (a step up to {self._step_repeats})" if self.estimated else "")
            + f"; about {_clock(self.left_s)} by the plan"
        )
        if self.study.changes:
            self.console.print("changed on the command line: " + ", ".join(self.study.changes))
        if self.interactive:
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[left]}"),
            )
            self.bar = Progress(*columns, console=self.console, transient=False)
            self.bar.start()
            total = len(self.cells) + self.estimated
            self.task = self.bar.add_task("cells", total=total, left="")

    def kept(self, keys: set[tuple[str, str, float]]) -> None:
        """A resumed run: the cells already stored count as done, and the time left without them."""
        kept = [c for c in self.cells if c.key in keys]
        self.done = len(kept)
        self.left_s -= sum(self.planned[c.position] for c in kept)
        self.say(
            f"resuming: {plural(len(kept), 'cell')} of {len(self.cells)} kept from the "
            f"unfinished run, {plural(len(self.cells) - len(kept), 'cell')} to run; about "
            f"{_clock(self.left_s)} left by the plan"
        )
        if self.bar is not None:
            self.bar.update(self.task, advance=len(kept))

    def say(self, text: str) -> None:
        """A line above the bar (warnings), or plainly."""
        (self.bar.console if self.bar else self.console).print(text, highlight=False)

    def step(self, message: str) -> None:
        """What the cell in progress is doing (the bar's description; nothing in plain logs)."""
        if self.bar is not None:
            self.bar.update(self.task, description=message)

    def cell_done(
        self, cell: CellPlan, outcome: CellOutcome, seconds: float, skipped: bool
    ) -> None:
        self.done += 1
        planned = self.planned.get(cell.position) or planned_seconds(self.study, cell)
        self.left_s -= planned
        if not skipped:  # cells of a server that left the sweep take no time
            self.actual_s += seconds
            self.expected_s += planned
        pace = self.actual_s / self.expected_s if self.expected_s else 1.0
        left = f"~{_clock(max(0.0, self.left_s) * pace)} left"
        if self.bar is not None:
            self.bar.update(self.task, advance=1, left=left)
            if cell.load.capacity is not None:  # a step: met or missed, and why
                self.say(f"  {line(cell, outcome)}")
            elif outcome.status != CellStatus.MEASURED:
                self.say(
                    f"  {cell.server} {cell.load.name} {cell.level:g}: "
                    f"{outcome.status}: {outcome.reason}"
                )
            return
        self.console.print(
            f"[{self.done}/{self.total}] {line(cell, outcome)} · {left}",
            highlight=False,
            soft_wrap=True,
        )

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def offered(cell: CellPlan) -> str:
    """Where a cell is: its load's level, or a capacity load's offered requests/s (a rate of
    connections times their calls, a replay's speed times its log's rate)."""
    load = cell.load
    if load.capacity is None:
        return f"{load.level_field}={cell.level:g}"
    unit = unit_rps(load)
    rps = cell.level * (unit if unit is not None else int(load.params.get("calls", 1)))
    speed = f"speed {cell.level:.3g}×, " if unit is not None else ""
    return f"{speed}offered {rps:,.0f} req/s"


def verdict(outcome: CellOutcome) -> str:
    """A capacity cell's verdict as a step ("step met: p99 ≤ 2 ms in 2 repeats"), or what the
    cost cell is; else its status and reason."""
    for note in outcome.notes:
        if note.startswith(STEP_NOTE):
            return "step " + note.partition("): ")[2]
        if note == COST_NOTE:
            return "CPU cost at a share of the capacity (not a step)"
    return outcome.status + (f" ({outcome.reason})" if outcome.reason else "")


def line(cell: CellPlan, outcome: CellOutcome) -> str:
    """One cell in a line: server, load and level (a capacity step: its offered req/s, met or
    missed and why), status, and its repeats' figures."""
    where = f"{cell.server} · {cell.load.name} {offered(cell)}"
    reps = outcome.repeats
    if not reps:
        return f"{where}: {verdict(outcome)}"
    rps = [r.rps_ok for r in reps]
    p50 = [r.latency_p50_us for r in reps if r.latency_p50_us is not None]
    figures = (
        f"{statistics.median(rps):,.0f} req/s (repeats {' '.join(f'{v:,.0f}' for v in rps)})"
        + (f", p50 {statistics.median(p50) / 1000:.2f} ms" if p50 else "")
    )
    return f"{where}: {verdict(outcome)}, {figures}"
