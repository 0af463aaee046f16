"""A claim's values read from a run: per level or taken together (max, min, sum), each with the
repeats behind it, the cells left out and why, and the cells that cannot be counted at all (a
dead cell whose errors the seed's tool would have counted in numbers no repeat recorded)."""

from __future__ import annotations

from dataclasses import dataclass, field

from wsgibench.results.seed_claims import Claim
from wsgibench.results.seed_verdicts import (
    CHANGED,
    HELD,
    NOT_COMPARABLE,
    Point,
    RunView,
    Samples,
    Verdict,
    chosen_levels,
    dead,
    fmt,
    usable,
    value_key,
)

EVERY_REQUEST = "every request an error"
SUMMED = ("error_rate", "errors")  # added over the levels unless the claim says otherwise


@dataclass(frozen=True)
class Value:
    """One value a claim reads: where ("100 connections", "max", "all levels"), the value, the
    repeats behind it per server start (empty when it is not one cell's), and how it was counted
    if not as read."""

    where: str
    value: float
    samples: Samples = ()
    level: float | None = None
    note: str = ""


@dataclass
class Series:
    """A server's values as a claim reads them, the cells left out (named, with why) and the cells
    it cannot count (any one makes the claim not comparable)."""

    values: list[Value]
    left: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def where(run: RunView, load: str, level: float) -> str:
    return f"{level:g} {run.level_unit.get(load, '')}".strip()


def _dead_value(claim: Claim, run: RunView, load: str, server: str, p: Point) -> Value | str:
    """A dead cell as the seed's tool would have counted it: its error rate is 100 % (every
    request an error); a count of errors or attempts no repeat recorded is unknown (said)."""
    if claim.metric == "error_rate":
        return Value(where(run, load, p.level), 1.0, (), p.level, f"{EVERY_REQUEST}: {p.failed}")
    tool = claim.counting if claim.counting != "ours" else "wsgibench"
    return (
        f"{server} at {p.level:g}: {p.failed} with no repeat stored, so how many errors {tool} "
        "would have counted there is unknown"
    )


def over(claim: Claim) -> str:
    return str(claim.get("over", "sum" if claim.metric in SUMMED else "each"))


def common_levels(claim: Claim, run: RunView, load: str, servers: list[str]) -> set[float]:
    """The levels at which every one of `servers` has a cell the claim may rest on."""
    kept = [
        {p.level for p in usable(claim, chosen_levels(claim, run.points[load][s]), s)[0]}
        for s in servers
    ]
    return set.intersection(*kept) if kept else set()


def series(
    claim: Claim, run: RunView, load: str, server: str, only: set[float] | None = None
) -> Series:
    """The server's values at the levels the claim speaks of (of them, `only` those given),
    aggregated as it says (`over`): each level, the max or min of them, or errors and attempts
    added over them."""
    points, left = usable(claim, chosen_levels(claim, run.points[load][server]), server)
    if only is not None:
        left += [
            f"{server} at {p.level:g}: another server compared has no trusted cell there"
            for p in points
            if p.level not in only
        ]
        points = [p for p in points if p.level in only]
    key = value_key(claim)
    how = over(claim)
    out = Series([], left)
    found: list[Value] = []
    for p in points:
        if dead(claim, p):
            got = _dead_value(claim, run, load, server, p)
            if isinstance(got, str) or how == "sum":
                out.unknown.append(got if isinstance(got, str) else _summed_dead(server, p))
            else:
                found.append(got)
        elif (v := p.values.get(key)) is not None:
            found.append(
                Value(where(run, load, p.level), float(v), p.samples.get(key, ()), p.level)
            )
    if how == "sum":
        out.values = _summed(claim, points) if points and not out.unknown else []
    elif how == "each" or not found:
        out.values = found
    else:
        pick = max if how == "max" else min
        best = pick(found, key=lambda x: x.value)
        out.values = [Value(how, best.value, best.samples, best.level, best.note)]
    return out


def _summed_dead(server: str, p: Point) -> str:
    return (
        f"{server} at {p.level:g}: {p.failed} with no repeat stored, so its share of the "
        "total over the levels is unknown"
    )


def _summed(claim: Claim, points: list[Point]) -> list[Value]:
    """Errors added over the levels (an error rate: all errors over all attempts)."""
    if claim.metric == "error_rate":
        errors = sum(p.values.get(value_key(claim, "errors")) or 0 for p in points)
        attempts = sum(p.values.get(value_key(claim, "attempts")) or 0 for p in points)
        return [Value("all levels", errors / attempts)] if attempts else []
    return [Value("all levels", sum(p.values.get(value_key(claim)) or 0 for p in points))]


def shown(claim: Claim, v: Value) -> str:
    """ "3.10 ms at 100 connections" (with how a dead cell was counted)."""
    note = f" ({v.note})" if v.note else ""
    return f"{fmt(claim.metric, v.value)} at {v.where}{note}"


def verdict(
    claim: Claim, held: bool, theirs: str, ours: str, sentence: str, left: list[str]
) -> Verdict:
    if left:
        sentence += f" (left out: {'; '.join(left)})"
    return Verdict(claim, HELD if held else CHANGED, theirs, ours, sentence)


def nothing(claim: Claim, theirs: str, left: list[str], what: str = "no trusted cell") -> Verdict:
    why = what + (f": {'; '.join(left)}" if left else "")
    return Verdict(claim, NOT_COMPARABLE, theirs, "—", why)


def uncounted(claim: Claim, theirs: str, unknown: list[str]) -> Verdict:
    """Not comparable: a cell the claim must count cannot be counted (named)."""
    return Verdict(claim, NOT_COMPARABLE, theirs, "—", "cannot be counted: " + "; ".join(unknown))
