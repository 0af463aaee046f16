"""Capacity within a latency budget: each step of the search judged against the budget, the next
offered rate to try (doubling until a step misses, then bisection to the resolution), and the
result read back from the steps: the highest rate that met the budget, the interval from the steps
either side, and the rate where errors start. Pure: the runner measures, this decides."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from wsgibench.machine import cpustat
from wsgibench.results.verdict import CellStatus


class StepStatus(enum.StrEnum):
    MET = "met"  # every repeat within the budget
    MISSED = "missed"  # a repeat over it: latency, errors, or the server gave up
    INVALID = "invalid"  # the engine, not the server, limited a repeat: no verdict on the server


@dataclass(frozen=True)
class Budget:
    """What a step must keep to: corrected p99 (and p50) at most so many ms, errors at most a
    share of the requests."""

    p99_ms: float
    p50_ms: float | None = None
    max_error_rate: float = 0.05

    def describe(self) -> str:
        parts = [f"p99 ≤ {self.p99_ms:g} ms"]
        if self.p50_ms is not None:
            parts.append(f"p50 ≤ {self.p50_ms:g} ms")
        parts.append(f"errors ≤ {self.max_error_rate:.1%}")
        return ", ".join(parts)


class RepeatFigures(Protocol):
    """What judging a step reads of each repeat (a Repeat, or one read back from the store)."""

    @property
    def latency_p99_us(self) -> float | None: ...

    @property
    def latency_p50_us(self) -> float | None: ...

    @property
    def error_rate(self) -> float | None: ...

    @property
    def rps_ok(self) -> float | None: ...


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


# A missed step that served this share less than the capacity: the server tipped (CapacityResult).
TIPPED = 0.10

# A step keeps up when its valid replies are at least this share of the requests offered: a
# server falling behind grows its queue, which a short repeat may not see in its p99 yet (with
# `calls` > 1 a connection holds one request at a time, so the queue grows `calls` times slower).
KEEP_UP = 0.95


def judge_step(
    rate: float,
    repeats: Sequence[RepeatFigures],
    budget: Budget,
    invalid: str | None = None,
    gave_up: str | None = None,
    offered_rps: float | None = None,
) -> Step:
    """A step meets the budget only when every repeat does (the repeats confirm it, so one lucky
    repeat cannot move the boundary) and keeps up with the requests offered (`offered_rps`); an
    engine-limited step is invalid, never the server's, and so is a repeat that missed while the
    hypervisor took more than a contended repeat's share of the server's full CPUs."""
    errors = any((r.error_rate or 0) > 0 for r in repeats)
    served = min((r.rps_ok for r in repeats if r.rps_ok is not None), default=None)
    if invalid:
        return Step(rate, StepStatus.INVALID, invalid, errors)
    if gave_up or not repeats:
        return Step(rate, StepStatus.MISSED, gave_up or "no repeat measured", True)
    for i, r in enumerate(repeats, 1):
        over = repeat_miss(r, budget, offered_rps)
        stolen = stolen_pct(r)
        if over and stolen is not None:
            why = (
                f"repeat {i}: {over} while the hypervisor took {stolen:.0f} % of the server's "
                "CPUs (steal): the machine's miss, not the server's"
            )
            return Step(rate, StepStatus.INVALID, why, errors, harness=True)
        if over:
            return Step(rate, StepStatus.MISSED, f"repeat {i}: {over}", errors, served=served)
    worst = max(r.latency_p99_us or 0 for r in repeats) / 1000
    why = f"p99 ≤ {worst:.3g} ms in {len(repeats)} repeats"
    return Step(rate, StepStatus.MET, why, errors, served=served)


def step_of(
    rate: float,
    status: CellStatus,
    reason: str | None,
    repeats: Sequence[RepeatFigures],
    budget: Budget,
    calls: int = 1,
) -> Step:
    """A cell as a step: invalid when the engine (or the machine) limited it, or the server could
    not take it at all or did not start (the search ends: no lower rate would say more); missed
    when the server gave up (disqualified); else judged per repeat, keeping up included."""
    if status == CellStatus.DISQUALIFIED and not repeats:
        return judge_step(rate, repeats, budget, invalid=f"did not start or serve: {reason}")
    if status == CellStatus.INVALID:
        beyond = missed_beyond_lag(reason, repeats, budget)
        if beyond:
            return Step(
                rate, StepStatus.MISSED, beyond, any((r.error_rate or 0) > 0 for r in repeats)
            )
        step = judge_step(rate, repeats, budget, invalid=reason or "invalid")
        return replace(step, harness=True)
    if status in (CellStatus.UNAVAILABLE, CellStatus.FAILED):
        return judge_step(rate, repeats, budget, invalid=f"{status}: {reason}")
    if status == CellStatus.DISQUALIFIED:
        return judge_step(rate, repeats, budget, gave_up=f"disqualified: {reason}")
    return judge_step(rate, repeats, budget, offered_rps=rate * calls)


# What the runner says of a repeat the engine limited (run/judge.py), and the one reason that can
# be bounded: the engine sent late by at most its worst schedule lag.
BOTTLENECK = "load generator was the bottleneck: "
_LAG_ONLY = re.compile(r"schedule lag p99 \d+ us > \d+ us")


def missed_beyond_lag(reason: str | None, repeats: Sequence[RepeatFigures], budget: Budget) -> str:
    """A step the engine's schedule lag alone made invalid is still the server's miss when a
    repeat's corrected p99 is over the budget by more than twice the engine's worst lag (late
    to send, and as late again to read): with no lag at all it would have missed. Any other
    engine limit (its CPU, starvation, ports) leaves the step invalid. Empty: not so."""
    if not reason or not reason.startswith(BOTTLENECK):
        return ""
    if not all(_LAG_ONLY.fullmatch(part) for part in reason[len(BOTTLENECK) :].split(", ")):
        return ""
    for i, r in enumerate(repeats, 1):
        engine = getattr(r, "engine", None)  # a stored or measured repeat has its engine result
        if engine is None or r.latency_p99_us is None:
            continue
        lag_ms, p99_ms = engine.lag_max_us / 1000, r.latency_p99_us / 1000
        if p99_ms - 2 * lag_ms > budget.p99_ms:
            return (
                f"repeat {i}: p99 {p99_ms:.3g} ms > {budget.p99_ms:g} ms by more than twice the "
                f"engine's worst schedule lag ({lag_ms:.3g} ms): the server's miss"
            )
    return ""


# A repeat whose server CPUs the hypervisor took more of than a contended repeat's share (steal)
# while they had no room left (busy and stolen together at least FULL_PCT) cannot show the server's
# miss: the server needed the stolen time.
FULL_PCT = 90.0


def stolen_pct(r: RepeatFigures) -> float | None:
    """The share of the server's CPUs the hypervisor took during the repeat (steal) when it is
    over cpustat.CONTENDED_PCT and the CPUs were full with it; None when not, or not recorded."""
    use = getattr(r, "server_cpu", None)  # a Repeat as measured or as stored
    if use is None:
        return None
    full = use.steal_pct > cpustat.CONTENDED_PCT and use.busy_pct + use.steal_pct >= FULL_PCT
    return float(use.steal_pct) if full else None


def repeat_miss(r: RepeatFigures, budget: Budget, offered_rps: float | None = None) -> str:
    """Why one repeat misses the budget (over it, or falling behind the requests offered), or
    "": a step stops at its first such repeat, whose verdict is then known."""
    return _over(r, budget) or _behind(r, offered_rps)


def _behind(r: RepeatFigures, offered_rps: float | None) -> str:
    if offered_rps is None or (r.rps_ok or 0.0) >= KEEP_UP * offered_rps:
        return ""
    return f"{r.rps_ok or 0:,.0f} valid replies/s of {offered_rps:,.0f} offered: falling behind"


def _over(r: RepeatFigures, budget: Budget) -> str:
    if r.latency_p99_us is None:
        return "no latency"
    if r.latency_p99_us / 1000 > budget.p99_ms:
        return f"p99 {r.latency_p99_us / 1000:.3g} ms > {budget.p99_ms:g} ms"
    if budget.p50_ms is not None and (r.latency_p50_us or 0) / 1000 > budget.p50_ms:
        return f"p50 {(r.latency_p50_us or 0) / 1000:.3g} ms > {budget.p50_ms:g} ms"
    if (r.error_rate or 0) > budget.max_error_rate:
        return f"errors {(r.error_rate or 0):.2%} > {budget.max_error_rate:.1%}"
    return ""


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

    @property
    def interval(self) -> tuple[float, float | None]:
        return (self.capacity or 0.0, self.above)

    @property
    def lower_bound(self) -> bool:
        """The search stopped where the harness, not the server, was the limit: the server takes
        at least the capacity found, maybe more."""
        return any(s.status == StepStatus.INVALID and s.harness for s in self.steps)

    def tipped(self, calls: int = 1) -> Step | None:
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
            for s in self.steps
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
    bisection until the interval is within `resolution` of the rate; at most `max_steps`."""

    start: float
    resolution: float = 0.05
    max_rate: float = 1e6
    min_rate: float = 1.0
    max_steps: int = 16
    steps: list[Step] = field(default_factory=list)

    def record(self, step: Step) -> None:
        self.steps.append(step)

    def next_rate(self) -> float | None:
        """The next rate to try, or None when the search is over."""
        if not self.steps:
            return _rounded(self.start)
        if self._stop():
            return None
        lo, hi = bounds(self.steps)
        if hi is None:
            assert lo is not None
            if lo >= self.max_rate:
                return None
            return min(_rounded(lo * 2), self.max_rate)  # the ceiling itself is tried
        if lo is None:
            if hi <= self.min_rate:
                return None
            return max(_rounded(hi / 2), self.min_rate)
        if (hi - lo) / lo <= self.resolution:
            return None
        return _between(lo, hi)

    def _stop(self) -> bool:
        return len(self.steps) >= self.max_steps or any(
            s.status == StepStatus.INVALID for s in self.steps
        )

    def result(self) -> CapacityResult:
        return capacity_of(self.steps, self.resolution, self.max_steps)


def bounds(steps: Iterable[Step]) -> tuple[float | None, float | None]:
    """The lowest rate that missed, and the highest that met below it (a met step above a miss is
    noise the search does not trust)."""
    judged = [s for s in steps if s.status != StepStatus.INVALID]
    missed = [s.rate for s in judged if s.status == StepStatus.MISSED]
    hi = min(missed) if missed else None
    met = [s.rate for s in judged if s.status == StepStatus.MET and (hi is None or s.rate < hi)]
    return (max(met) if met else None), hi


def capacity_of(steps: Sequence[Step], resolution: float, max_steps: int = 16) -> CapacityResult:
    """The result the steps say, whoever ran them (the search, or a report reading the store)."""
    lo, hi = bounds(steps)
    invalid = next((s for s in steps if s.status == StepStatus.INVALID), None)
    onset = min((s.rate for s in steps if s.errors), default=None)
    proof = next((s.cell_id for s in steps if s.rate == lo), None)
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
# The shares of capacity at which CPU per request is measured after the search.
COST_SHARES = (0.25, 0.5, 0.75)


def cost_rates(capacity: float, tried: Iterable[float]) -> list[float]:
    """The rates at 25, 50 and 75 % of capacity not tried yet (100 % is the capacity step)."""
    done = set(tried)
    return [r for share in COST_SHARES if (r := _rounded(capacity * share)) not in done and r > 0]
