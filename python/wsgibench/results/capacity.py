"""Capacity within a latency budget: the next offered rate to try (doubling until a step misses,
then bisection to the resolution), and the result read back from the steps (results/capacity_step.py
judges each): the highest rate that met the budget, the interval from the steps either side, and
the rate where errors start. Pure: the runner measures, this decides."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


class StepStatus(enum.StrEnum):
    MET = "met"  # its repeats together within the budget
    MISSED = "missed"  # over it: latency, errors, falling behind, or the server gave up
    INVALID = "invalid"  # the engine, not the server, limited a repeat: no verdict on the server


@dataclass(frozen=True)
class Budget:
    """What a step must keep to: corrected p99 (and p50) at most so many ms, errors at most a
    share of the requests."""

    p99_ms: float
    p50_ms: float | None = None
    max_error_rate: float = 0.05
    per_kind: bool = False  # each request kind's own latency within it too (a replay's)

    def describe(self) -> str:
        parts = [f"p99 ≤ {self.p99_ms:g} ms"]
        if self.p50_ms is not None:
            parts.append(f"p50 ≤ {self.p50_ms:g} ms")
        if self.per_kind:
            parts[-1] += " (each kind)"
        parts.append(f"errors ≤ {self.max_error_rate:.1%}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Step:
    rate: float  # the offered rate of the step (its cell's level)
    status: StepStatus
    reason: str
    errors: bool = False  # any error in any repeat: where errors start
    cell_id: int | None = None  # the stored cell that proves it
    # Invalid because the harness (the engine, the machine, a load host) limited it, not because
    # the server could not run: the capacity found below it is a lower bound.
    harness: bool = False
    served: float | None = None  # valid replies/s of its slowest repeat (requests/s)
    # Of those, limited by the machine's other work rather than by the engine's own capacity (the
    # engine starved of its CPU, or late on its schedule while not busy; the server's full CPUs
    # taken by the hypervisor): a condition that passes, so the search runs the step once more.
    machine: bool = False


# A missed step that served this share less than the capacity: the server tipped (CapacityResult).
TIPPED = 0.10


@dataclass(frozen=True)
class CapacityResult:
    """The highest rate that met the budget (None: not even the lowest tried), the interval it
    lies in (from it to the lowest rate above it that missed; None above: the search's ceiling
    was reached), the rate where errors start, and why the search stopped."""

    capacity: float | None
    above: float | None
    error_onset: float | None
    stopped: str
    invalid: str | None = None
    steps: tuple[Step, ...] = ()
    proof: int | None = None  # the cell of the capacity step
    # The steps (their places in `steps`) the machine limited and the search ran again at once:
    # set aside, each in its stored cell, the step after it at the same rate standing instead.
    rerun: tuple[int, ...] = ()

    @property
    def interval(self) -> tuple[float, float | None]:
        return (self.capacity or 0.0, self.above)

    @property
    def standing(self) -> tuple[Step, ...]:
        """The steps the result stands on: all but those run again."""
        return tuple(s for i, s in enumerate(self.steps) if i not in self.rerun)

    @property
    def stopping(self) -> Step | None:
        """The invalid step that ended the search, if one did."""
        return next((s for s in self.standing if s.status == StepStatus.INVALID), None)

    @property
    def lower_bound(self) -> bool:
        """The search stopped where the harness, not the server, was the limit: the server takes
        at least the capacity found, maybe more."""
        return self.stopping is not None and self.stopping.harness

    def tipped(self, calls: float = 1) -> Step | None:
        """The lowest missed step above the capacity that served `TIPPED` less than the capacity
        (at `calls` requests an arrival): offered more, the server served clearly less than it had
        met, so once behind it fell further, and its capacity can move between runs by more than
        that. None when every miss served about the capacity (a saturated server's overhead costs
        it a few per cent)."""
        if self.capacity is None:
            return None
        met = self.capacity * calls * (1 - TIPPED)
        fell = [
            s
            for s in self.standing
            if s.status == StepStatus.MISSED
            and s.rate > self.capacity
            and s.served is not None
            and s.served < met
        ]
        return min(fell, key=lambda s: s.rate, default=None)

    @property
    def could_not_run(self) -> str | None:
        """Why the server could not run a step (did not start, unavailable, failed), if so."""
        return next(
            (s.reason for s in self.steps if s.status == StepStatus.INVALID and not s.harness),
            None,
        )


@dataclass
class Search:
    """Doubling from `start` until a step misses (halving while the first ones miss), then
    bisection until the interval is within `resolution` of the rate; at most `max_steps`. With
    `second` (above `start`), a first step that met is followed by `second` rather than its
    double, and one that missed by the rate as far below `start` (their ratio) rather than its
    half: a search seeded with an earlier one's interval brackets the knee in two steps, which it
    still measures itself."""

    start: float
    resolution: float = 0.05
    max_rate: float = 1e6
    min_rate: float = 1.0
    max_steps: int = 16
    second: float | None = None
    # How many steps the machine limited (Step.machine) the search runs again, each once, at most
    reruns: int = 2
    steps: list[Step] = field(default_factory=list)

    def record(self, step: Step) -> None:
        self.steps.append(step)

    def next_rate(self) -> float | None:
        """The next rate to try, or None when the search is over. A step the machine limited is
        run again once, at once (within `reruns`); any other invalid step ends the search."""
        if not self.steps:
            return _rounded(self.start)
        last = self.steps[-1]
        if last.status == StepStatus.INVALID:
            return last.rate if self._may_rerun(last) else None
        if len(self.steps) - len(set_aside(self.steps)) >= self.max_steps:
            return None
        lo, hi = bounds(self.steps)
        if hi is None:
            assert lo is not None
            if lo >= self.max_rate:
                return None
            return min(_rounded(lo * self._factor()), self.max_rate)  # the ceiling is tried
        if lo is None:
            if hi <= self.min_rate:
                return None
            return max(_rounded(hi / self._factor()), self.min_rate)
        if (hi - lo) / lo <= self.resolution:
            return None
        return _between(lo, hi)

    def _factor(self) -> float:
        """How far the next rate goes from the only one tried so far (up from a met step, down
        from a missed one): to `second`'s distance after the first step, else twice or half."""
        if len(self.steps) == 1 and self.second is not None and self.second > self.steps[0].rate:
            return self.second / self.steps[0].rate
        return 2.0

    def _may_rerun(self, last: Step) -> bool:
        """The last step, invalid, is run again: the machine limited it, it is not itself a
        step run again, and the search has reruns left."""
        before = self.steps[-2] if len(self.steps) > 1 else None
        again = before is not None and before.rate == last.rate
        return last.machine and not again and len(set_aside(self.steps)) < self.reruns

    def result(self) -> CapacityResult:
        return capacity_of(self.steps, self.resolution, self.max_steps)


def set_aside(steps: Sequence[Step]) -> tuple[int, ...]:
    """The places of the steps the machine limited that were run again: each followed at once
    by a step at its rate (the search never tries one rate twice in a row otherwise)."""
    return tuple(
        i
        for i, (s, after) in enumerate(zip(steps, steps[1:], strict=False))
        if s.status == StepStatus.INVALID and s.machine and after.rate == s.rate
    )


def bounds(steps: Iterable[Step]) -> tuple[float | None, float | None]:
    """The lowest rate that missed, and the highest that met below it (a met step above a miss is
    noise the search does not trust)."""
    judged = [s for s in steps if s.status != StepStatus.INVALID]
    missed = [s.rate for s in judged if s.status == StepStatus.MISSED]
    hi = min(missed) if missed else None
    met = [s.rate for s in judged if s.status == StepStatus.MET and (hi is None or s.rate < hi)]
    return (max(met) if met else None), hi


def capacity_of(steps: Sequence[Step], resolution: float, max_steps: int = 16) -> CapacityResult:
    """The result the steps say, whoever ran them (the search, or a report reading the store);
    a step run again is set aside for the one that ran after it."""
    aside = set_aside(steps)
    standing = [s for i, s in enumerate(steps) if i not in aside]
    lo, hi = bounds(standing)
    invalid = next((s for s in standing if s.status == StepStatus.INVALID), None)
    onset = min((s.rate for s in standing if s.errors), default=None)
    proof = next((s.cell_id for s in standing if s.rate == lo), None)
    if invalid is not None:
        stopped = f"invalid at {invalid.rate:g}/s: {invalid.reason}"
    elif hi is None:
        stopped = "the search's ceiling reached: capacity is at least this"
    elif lo is None:
        stopped = "missed at the lowest rate tried"
    elif (hi - lo) / lo <= resolution:
        stopped = f"within {resolution:.0%}"
    else:
        stopped = f"step limit ({max_steps}) reached"
    return CapacityResult(
        lo,
        hi,
        onset,
        stopped,
        invalid.reason if invalid else None,
        tuple(steps),
        proof,
        aside,
    )


def _rounded(rate: float, digits: int = 3) -> float:
    """Rates as a person would write them: three significant digits."""
    return float(f"{rate:.{digits}g}")


def _between(lo: float, hi: float) -> float | None:
    """The middle of the interval, with as few digits as keep it strictly inside (three, more
    when a fine resolution needs them)."""
    for digits in range(3, 16):
        mid = _rounded((lo + hi) / 2, digits)
        if lo < mid < hi:
            return mid
    return None


# The note that marks a cell run for CPU cost, not as a step of the search; and a step's note.
COST_NOTE = "capacity: CPU cost at a share of the capacity, not a step of the search"
STEP_NOTE = "capacity step"
# The note of a step run again because the machine limited it: its cell took the first one's
# place in the store (one cell a rate), the first one's reason said after it in brackets.
RERUN_NOTE = "capacity step run again at once: the machine limited its first run"
# The rerun's second note: how long the search waited for the CPUs to be calm before it
# (machine/calm.py), up to 10 s, so that the rerun does not meet the same moment of steal.
CALM_NOTE = "before the rerun"
# The shares of capacity at which CPU per request is measured after the search.
COST_SHARES = (0.25, 0.5, 0.75)


def cost_rates(capacity: float, tried: Iterable[float]) -> list[float]:
    """The rates at 25, 50 and 75 % of capacity not tried yet (100 % is the capacity step)."""
    done = set(tried)
    return [r for share in COST_SHARES if (r := _rounded(capacity * share)) not in done and r > 0]
