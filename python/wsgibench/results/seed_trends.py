"""The rules of claims about how a value moves with the load or between servers: steady, rises,
falls, no_fall, alike, jump. Their tolerance (25 % unless the claim says) is the project's reading
of words that give no number (docs/seed-verdicts.md)."""

from __future__ import annotations

from wsgibench.results.seed_claims import Claim
from wsgibench.results.seed_values import (
    Value,
    common_levels,
    nothing,
    over,
    series,
    shown,
    uncounted,
    verdict,
)
from wsgibench.results.seed_verdicts import NOT_COMPARABLE, RunView, Verdict, fmt

TOLERANCE = 0.25


def _tolerance(claim: Claim) -> float:
    return float(claim.get("tolerance", TOLERANCE))


def _moved(claim: Claim, values: list[Value]) -> tuple[bool, str]:
    """Whether a server's values move as the kind says, and what they did, in words."""
    tol, m = _tolerance(claim), claim.metric
    first, last = values[0], values[-1]
    low, high = min(v.value for v in values), max(v.value for v in values)
    if claim.kind == "steady":
        spread = high / low if low else float("inf")
        return spread <= 1 + tol, f"{fmt(m, low)}–{fmt(m, high)} ({spread:.2f}×)"
    grew = last.value / first.value if first.value else float("inf")
    said = f"{shown(claim, first)} → {shown(claim, last)} ({grew:.2f}×)"
    if claim.kind == "rises":
        return grew > 1 + tol, said
    if claim.kind == "falls":
        return grew < 1 / (1 + tol), said
    floor = first.value / (1 + tol)  # no_fall
    dips = [v for v in values if v.value < floor]
    return not dips, said + (
        "; below the floor at " + ", ".join(v.where for v in dips) if dips else ""
    )


WORDS = {
    "steady": "within {tol:.0%} across the levels judged",
    "rises": "more than {tol:.0%} higher at its highest level than at its lowest",
    "falls": "more than {tol:.0%} lower at its highest level than at its lowest",
    "no_fall": "never more than {tol:.0%} below its lowest level's value",
}


def trend_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    """steady / rises / falls / no_fall: each server over the levels judged (two at least)."""
    seen, off, left, unknown = [], [], [], []
    for server in claim.servers:
        got = series(claim, run, load, server)
        left += got.left
        unknown += got.unknown
        if len(got.values) < 2:
            left.append(f"{server}: fewer than two trusted levels")
            continue
        ok, said = _moved(claim, got.values)
        seen.append(f"{server} {said}")
        if not ok:
            off.append(seen[-1])
    if unknown:
        return uncounted(claim, theirs, unknown)
    if not seen:
        return nothing(claim, theirs, left, "no server with two trusted levels")
    words = WORDS[claim.kind].format(tol=_tolerance(claim))
    sentence = f"not {words}: {'; '.join(off)}" if off else f"each {words}"
    return verdict(claim, not off, theirs, "; ".join(seen), sentence, left)


def alike_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    """alike: at every level judged, every server named measured, the largest value within the
    tolerance of the smallest."""
    gone = [s for s in claim.servers if s not in run.points[load]]
    if gone:
        why = "; ".join(f"{s}: {run.absent.get(s, 'not in this run')}" for s in gone)
        return Verdict(claim, NOT_COMPARABLE, theirs, "—", f"not measured: {why}")
    only = common_levels(claim, run, load, claim.servers) if over(claim) == "sum" else None
    got = {s: series(claim, run, load, s, only) for s in claim.servers}
    left = [w for g in got.values() for w in g.left]
    unknown = [w for g in got.values() for w in g.unknown]
    if unknown:
        return uncounted(claim, theirs, unknown)
    tol, m = _tolerance(claim), claim.metric
    seen, off = [], []
    for at in dict.fromkeys(v.where for g in got.values() for v in g.values):
        row = {s: v.value for s, g in got.items() for v in g.values if v.where == at}
        if len(row) < len(claim.servers):
            left.append(f"{at}: not every server has a trusted cell")
            continue
        low, high = min(row.values()), max(row.values())
        spread = high / low if low else float("inf")
        seen.append(f"{fmt(m, low)}–{fmt(m, high)} ({spread:.2f}×) at {at}")
        if spread > 1 + tol:
            off.append(seen[-1])
    if not seen:
        return nothing(claim, theirs, left, "no level where every server has a trusted cell")
    sentence = (
        f"not within {tol:.0%} of each other: {'; '.join(off)}"
        if off
        else f"within {tol:.0%} of each other at every level judged"
    )
    return verdict(claim, not off, theirs, "; ".join(seen), sentence, left)


def jump_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    """jump: the value at the first level past `above` at least `factor` times the last below."""
    server = claim.servers[0]
    got = series(claim, run, load, server)
    above, factor = float(claim.get("above")), float(claim.get("factor"))
    before = [v for v in got.values if v.level is not None and v.level <= above]
    after = [v for v in got.values if v.level is not None and v.level > above]
    if not before or not after:
        return nothing(
            claim, theirs, got.left, f"the run has no trusted level on each side of {above:g}"
        )
    a, b = before[-1].value, after[0].value
    grew = b / a if a else float("inf")
    ours = f"{fmt(claim.metric, a)} → {fmt(claim.metric, b)} ({grew:.1f}×)"
    sentence = f"{server}: {grew:.1f}× past {above:g} (the claim: at least {factor:g}×)"
    return verdict(claim, grew >= factor, theirs, ours, sentence, got.left)
