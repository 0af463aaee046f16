"""A capacity step's verdict: its repeats judged together against the budget, as one stretch of
load at the step's rate (the p99 of all their requests, their errors, their valid replies against
the requests offered), or invalid where the engine, a load host or the hypervisor was the limit;
and when a step's verdict is known before its last repeat. Pure: the runner measures, this
decides."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from wsgibench.machine import cpustat
from wsgibench.results.capacity import Budget, Step, StepStatus
from wsgibench.results.capacity_kinds import kind_miss
from wsgibench.results.capacity_pool import Pooled, RepeatFigures, pool
from wsgibench.results.verdict import BOTTLENECK, SKEW, STARVED, CellStatus

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
    calls: int = 1,
) -> Step:
    """A step meets the budget when its repeats together do: the p99 (and p50) of all their
    requests within it, their errors within `max_error_rate` of their requests, and their valid
    replies at least `KEEP_UP` of the requests offered (`offered_rps`). So the repeats confirm a
    verdict rather than each deciding it: one repeat that tipped for a moment does not fail a
    step whose repeats together kept to the budget, and one lucky repeat cannot pass one that did
    not. An engine-limited step is invalid, never the server's, and so is a miss that the
    repeats the hypervisor took the server's full CPUs from made (without them the rest met)."""
    errors = any((r.error_rate or 0) > 0 for r in repeats)
    served = min((r.rps_ok for r in repeats if r.rps_ok is not None), default=None)
    if invalid:
        return Step(rate, StepStatus.INVALID, invalid, errors)
    if gave_up or not repeats:
        return Step(rate, StepStatus.MISSED, gave_up or "no repeat measured", True)
    together = pool(repeats, offered_rps, calls)
    over = pooled_miss(together, repeats, budget)
    if not over:
        return Step(rate, StepStatus.MET, _met(together, repeats), errors, served=served)
    machine = _machines_miss(repeats, budget, offered_rps, calls)
    if machine:
        return Step(rate, StepStatus.INVALID, machine, errors, harness=True, machine=True)
    return Step(rate, StepStatus.MISSED, over, errors, served=served)


def verdict_known(
    repeats: Sequence[RepeatFigures],
    budget: Budget,
    offered_rps: float | None,
    planned: int,
    calls: int = 1,
) -> str:
    """Why the step misses whatever its repeats still to run (of `planned`) give, even if every
    one of them is flawless; "" while they could still make it meet."""
    if not repeats:
        return ""
    together = pool(repeats, offered_rps, calls)
    if not pooled_miss(together.as_planned(planned), repeats, budget):
        return ""
    left = planned - len(repeats)
    return (
        f"{pooled_miss(together, repeats, budget)}: a miss whatever the {_repeats(left)} left give"
    )


def pooled_miss(
    together: Pooled, repeats: Sequence[RepeatFigures], budget: Budget, keep_up: float = KEEP_UP
) -> str:
    """Why the repeats together miss the budget, or "". Without histograms to add, a repeat's
    own p99 (p50) over the budget misses the step (the pooled one cannot be known)."""
    n = together.repeats
    if together.histogram is not None and not together.histogram.get_total_count():
        return f"no reply{_over(n)}"
    for pct, limit_ms in ((99.0, budget.p99_ms), (50.0, budget.p50_ms)):
        if limit_ms is None:
            continue
        share = together.share_over(limit_ms * 1000)
        if share is None:  # no histogram: each repeat's own percentile
            for i, r in enumerate(repeats, 1):
                value = _percentile(r, pct)
                if value is None:
                    return f"repeat {i}: no latency"
                if value / 1000 > limit_ms:
                    return f"repeat {i}: p{pct:g} {value / 1000:.3g} ms > {limit_ms:g} ms"
        elif share > 1 - pct / 100:
            value = together.percentile_us(pct) or 0.0
            return (
                f"p{pct:g} {_ms(value, limit_ms)} ms > {limit_ms:g} ms{_over(n)} "
                f"({share:.1%} of the requests over {limit_ms:g} ms)"
            )
    if budget.per_kind:
        scale = n / max(together.planned, n)
        for pct, limit_ms in ((99.0, budget.p99_ms), (50.0, budget.p50_ms)):
            missed = kind_miss(repeats, pct, limit_ms, scale)
            if missed:
                return missed
    if together.error_rate > budget.max_error_rate:
        return f"errors {together.error_rate:.2%} > {budget.max_error_rate:.1%}{_over(n)}"
    if together.served_share is not None and together.served_share < keep_up:
        offered, answerable = together.offered_rps or 0.0, together.answerable_rps or 0.0
        said = (
            f" ({answerable:,.0f} answerable in the window)" if answerable < 0.995 * offered else ""
        )
        return (
            f"{together.served_rps:,.0f} valid replies/s of {offered:,.0f} "
            f"offered{said}{_over(n)}: falling behind"
        )
    return ""


def _met(together: Pooled, repeats: Sequence[RepeatFigures]) -> str:
    p99 = together.percentile_us(99.0)
    if p99 is None:  # no histogram: the slowest repeat's own p99
        p99 = max(r.latency_p99_us or 0 for r in repeats)
        return f"p99 ≤ {p99 / 1000:.3g} ms in {_repeats(together.repeats)}"
    return f"p99 {p99 / 1000:.3g} ms over {_repeats(together.repeats)}"


def _repeats(n: int) -> str:
    return f"{n} repeat{'s' if n != 1 else ''}"


def _ms(value_us: float, limit_ms: float) -> str:
    """A latency in ms with the digits that tell it from the limit (10.01, not 10)."""
    for digits in range(3, 7):
        shown = f"{value_us / 1000:.{digits}g}"
        if float(shown) != limit_ms:
            return shown
    return shown


def _over(n: int) -> str:
    """What a pooled figure is of, when it is of more than one repeat."""
    return f" over {n} repeats" if n > 1 else ""


def _percentile(r: RepeatFigures, pct: float) -> float | None:
    return r.latency_p99_us if pct == 99.0 else r.latency_p50_us


def _machines_miss(
    repeats: Sequence[RepeatFigures], budget: Budget, offered_rps: float | None, calls: int
) -> str:
    """The miss is the machine's when the repeats that missed with the server's CPUs stolen from
    (`stolen_pct`) made it: the other repeats together met the budget. "" when not so."""
    stolen = [
        (i, r, pct, alone)
        for i, r in enumerate(repeats, 1)
        if (pct := stolen_pct(r)) is not None
        and (alone := pooled_miss(pool([r], offered_rps, calls), [r], budget))
    ]
    if not stolen:
        return ""
    rest = [r for r in repeats if all(r is not s for _, s, _, _ in stolen)]
    if rest and pooled_miss(pool(rest, offered_rps, calls), rest, budget):
        return ""
    i, r, pct, alone = stolen[0]
    alone = alone.removeprefix("repeat 1: ")
    return (
        f"repeat {i}: {alone} while the hypervisor took {pct:.0f} % of the server's "
        "CPUs (steal): the machine's miss, not the server's"
    )


def step_of(
    rate: float,
    status: CellStatus,
    reason: str | None,
    repeats: Sequence[RepeatFigures],
    budget: Budget,
    calls: int = 1,
    unit_rps: float | None = None,
) -> Step:
    """A cell as a step: invalid when the engine (or the machine: contended, starved) limited it,
    or the server could not take it at all or did not start (the search ends: no lower rate would
    say more); missed when the server gave up (disqualified); else its repeats judged together,
    keeping up included (worker deaths said with the verdict). The requests offered a second are
    the rate times `unit_rps` (a replay's speed times its log's mean rate), else times `calls`."""
    offered = rate * (unit_rps or calls)
    if status == CellStatus.DISQUALIFIED and not repeats:
        return judge_step(rate, repeats, budget, invalid=f"did not start or serve: {reason}")
    if status == CellStatus.INVALID:
        beyond = missed_beyond_lag(reason, repeats, budget)
        if beyond:
            return Step(
                rate, StepStatus.MISSED, beyond, any((r.error_rate or 0) > 0 for r in repeats)
            )
        kept = starved_on_schedule(rate, reason, repeats, budget, calls, offered)
        if kept is not None:
            return kept
        step = judge_step(rate, repeats, budget, invalid=reason or "invalid")
        return replace(step, harness=True, machine=machine_limited(reason))
    if status == CellStatus.CONTENDED:  # the machine's, not the server's: run again when calm
        step = judge_step(rate, repeats, budget, invalid=f"contended: {reason}")
        return replace(step, harness=True, machine=True)
    if status in (CellStatus.UNAVAILABLE, CellStatus.FAILED):
        return judge_step(rate, repeats, budget, invalid=f"{status}: {reason}")
    if status == CellStatus.DISQUALIFIED:
        return judge_step(rate, repeats, budget, gave_up=f"disqualified: {reason}")
    step = judge_step(rate, repeats, budget, offered_rps=offered, calls=calls)
    if status == CellStatus.DEATHS:  # the server's own doing, judged, and said with the step
        return replace(step, reason=f"{step.reason}; {reason}")
    return step


# The one reason of the engine's own that can be bounded: it sent late by at most its worst
# schedule lag.
_LAG_ONLY = re.compile(r"schedule lag p99 \d+ us > \d+ us")


def machine_limited(reason: str | None) -> bool:
    """The engine limited a step only because other work held its CPU (run/judge.py): every
    reason is "engine starved" or the schedule lag alone (late, not busy: its CPU at its limit
    would have said so). A condition that passes, unlike the engine's own limits (its CPU, its
    descriptors, its ports), which the same step meets again. Load hosts that started too far
    apart are the machines' too."""
    if reason and reason.startswith(SKEW):
        return True
    if not reason or not reason.startswith(BOTTLENECK):
        return False
    own, starved, _ = reason[len(BOTTLENECK) :].partition(STARVED)  # the harness's, said last
    parts = [p for p in own.split(", ") if p]
    return bool(parts or starved) and all(_LAG_ONLY.fullmatch(p) for p in parts)


def missed_beyond_lag(reason: str | None, repeats: Sequence[RepeatFigures], budget: Budget) -> str:
    """A step the engine's schedule lag alone made invalid is still the server's miss when its
    repeats together miss the budget widened by twice the engine's worst lag (late to send, and
    as late again to read): the p99 (p50) of all their requests over it, as `judge_step` pools
    them, so with no lag at all it would have missed. Any other engine limit (its CPU,
    starvation, ports) leaves the step invalid. Empty: not so."""
    if not reason or not reason.startswith(BOTTLENECK):
        return ""
    if not all(_LAG_ONLY.fullmatch(part) for part in reason[len(BOTTLENECK) :].split(", ")):
        return ""
    # a stored or measured repeat has its engine result; latency is all this rule judges
    with_engine = [(r, e) for r in repeats if (e := getattr(r, "engine", None)) is not None]
    if not with_engine:
        return ""
    measured = [r for r, _ in with_engine]
    lag_ms = max(e.lag_max_us for _, e in with_engine) / 1000
    slack = replace(_widened(budget, lag_ms), max_error_rate=1.0)
    miss = pooled_miss(pool(measured, None), measured, slack, keep_up=0.0)
    if not miss:
        return ""
    return (
        f"{miss}: over the budget ({budget.p99_ms:g} ms) by more than twice the engine's worst "
        f"schedule lag ({lag_ms:.3g} ms), the server's miss"
    )


def _widened(budget: Budget, lag_ms: float) -> Budget:
    """The budget's latencies with twice the engine's worst lag added (late to send, as late to
    read): what a server whose miss was only the engine's lateness would have kept to."""
    return replace(
        budget,
        p99_ms=budget.p99_ms + 2 * lag_ms,
        p50_ms=None if budget.p50_ms is None else budget.p50_ms + 2 * lag_ms,
    )


def starved_on_schedule(
    rate: float,
    reason: str | None,
    repeats: Sequence[RepeatFigures],
    budget: Budget,
    calls: int,
    offered: float | None = None,
) -> Step | None:
    """A step made invalid only because the engine waited for its CPU (starved, the harness's
    verdict: run/judge.py) while by its own account it kept its schedule and its CPU (no reason
    of its own) is still judged: late sends and reads only add to the latency counted from each
    arrival's due time and never lighten the load, so a step met so is met. A miss is the
    server's when it holds with the engine's worst lateness taken off: the p99 (p50) over the
    budget by more than twice the worst schedule lag (late to send, as late to read), or, with
    one request an arrival, the valid replies short by more than the lag's share of a repeat.
    With `calls` > 1 a connection's later requests follow its replies, off the schedule: a
    starved engine slows those chains by more than any lag shows, so falling behind is never
    the server's there. None when the step is not such a step, or the engine could explain the
    miss."""
    engines = [getattr(r, "engine", None) for r in repeats]
    if not reason or not reason.startswith(BOTTLENECK) or not repeats:
        return None
    if any(e is None or e.saturated for e in engines):
        return None  # the engine's own limit (its CPU, its lag, ports...): never judged
    lag_ms = max(e.lag_max_us for e in engines if e is not None) / 1000
    offered = offered or rate * calls
    step = judge_step(rate, repeats, budget, offered_rps=offered, calls=calls)
    late = f"the engine waited for its CPU but kept its schedule (worst lag {lag_ms:.3g} ms)"
    if step.status == StepStatus.MET:
        return replace(step, reason=f"{step.reason}; {late}, which only adds latency")
    window_s = min(e.elapsed_s for e in engines if e is not None) or 1.0
    slack = _widened(budget, lag_ms)
    together = pool(repeats, offered, calls)
    keep_up = KEEP_UP - lag_ms / 1000 / window_s if calls == 1 else 0.0
    if step.status == StepStatus.MISSED and pooled_miss(together, repeats, slack, keep_up):
        return replace(step, reason=f"{step.reason}, beyond what {late} explains")
    return None


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
