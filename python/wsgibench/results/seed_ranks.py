"""The rank rules (winner, last, position, order): judged only where every server the seed ranked
was measured with a trusted cell, each metric by its direction; an order the seed calls rough
holds where a swap is within the noise of the repeats (results/significance.py says which)."""

from __future__ import annotations

from dataclasses import dataclass

from wsgibench.results.seed_claims import BETTER, METRICS, Claim
from wsgibench.results.seed_values import (
    Series,
    Value,
    common_levels,
    nothing,
    over,
    series,
    uncounted,
    verdict,
)
from wsgibench.results.seed_verdicts import NOT_COMPARABLE, RunView, Verdict, fmt
from wsgibench.results.significance import compare_starts

Row = dict[str, Value]


@dataclass
class Judged:
    """What the pairs of one comparison came to: swaps beyond the noise (or on a strict claim),
    swaps within it, and swaps the repeats cannot test."""

    wrong: list[str]
    noise: list[str]
    untested: list[str]


def _better(claim: Claim, x: float, y: float) -> bool:
    """x strictly better than y by the metric's direction."""
    return x < y if METRICS[claim.metric][1] == "lower" else x > y


def _rows(
    claim: Claim, run: RunView, load: str
) -> tuple[list[tuple[str, Row]], list[str], list[str]]:
    """The comparisons: per level (or once, over max/min), every ranked server's value there;
    the levels and cells left out; the cells that cannot be counted."""
    # a total over the levels is compared over the same levels for every server
    only = common_levels(claim, run, load, claim.ranked) if over(claim) == "sum" else None
    got: dict[str, Series] = {s: series(claim, run, load, s, only) for s in claim.ranked}
    left = [why for s in got.values() for why in s.left]
    unknown = [why for s in got.values() for why in s.unknown]
    wheres = list(dict.fromkeys(v.where for s in got.values() for v in s.values))
    rows = []
    for w in wheres:
        row = {s: v for s, found in got.items() for v in found.values if v.where == w}
        if len(row) == len(claim.ranked):
            rows.append((w, row))
        else:
            absent = ", ".join(s for s in claim.ranked if s not in row)
            left.append(f"{w}: no trusted cell of {absent}")
    return rows, left, unknown


def _pair(claim: Claim, ahead: str, behind: str, row: Row, at: str, judged: Judged) -> None:
    """The claim needs `ahead` better than `behind`: where it is not, a swap (strict), or on a
    rough claim a swap beyond the noise, within it, or untested (too few repeats)."""
    a, b = row[ahead], row[behind]
    if _better(claim, a.value, b.value):
        return
    m = claim.metric
    swap = f"at {at}, {behind} ({fmt(m, b.value)}) not behind {ahead} ({fmt(m, a.value)})"
    if not claim.get("rough"):
        judged.wrong.append(swap)
        return
    if not a.samples or not b.samples:
        judged.untested.append(f"{swap}: no repeats to test")
        return
    test = compare_starts(a.samples, b.samples)
    if not test.testable:
        judged.untested.append(f"{swap}: {test.method}")
    elif test.beyond_noise:
        judged.wrong.append(f"{swap}, beyond the noise ({test.method})")
    else:
        judged.noise.append(f"{swap}, within the noise ({test.method})")


def _judge_row(claim: Claim, row: Row, at: str, judged: Judged) -> None:
    named, others = claim.servers, [s for s in claim.ranked if s not in claim.servers]
    if claim.kind in ("winner", "last"):
        for n in named:
            for o in others:
                ahead, behind = (n, o) if claim.kind == "winner" else (o, n)
                _pair(claim, ahead, behind, row, at, judged)
        if claim.kind == "winner" and claim.get("margin") is not None:
            _margin(claim, row, at, judged)
    elif claim.kind == "order":
        for a, b in zip(named, named[1:], strict=False):
            _pair(claim, a, b, row, at, judged)
    else:
        _place(claim, row, at, judged)


def _margin(claim: Claim, row: Row, at: str, judged: Judged) -> None:
    """A winner ahead of every other server by at least `margin` times."""
    margin, lower = float(claim.get("margin")), METRICS[claim.metric][1] == "lower"
    for n in claim.servers:
        for o in (s for s in claim.ranked if s not in claim.servers):
            a, b = row[n].value, row[o].value
            times = (b / a if a else float("inf")) if lower else (a / b if b else float("inf"))
            if times < margin:
                judged.wrong.append(f"at {at}, {n} is {times:.2f}× {o}, not {margin:g}×")


def _place(claim: Claim, row: Row, at: str, judged: Judged) -> None:
    """position: the server's place (1 + the servers strictly better) in the asked place or
    range of places (a list [first, last])."""
    server = claim.servers[0]
    place = 1 + sum(
        1 for s in row if s != server and _better(claim, row[s].value, row[server].value)
    )
    asked = claim.get("position")
    lo, hi = (int(asked[0]), int(asked[1])) if isinstance(asked, list) else (int(asked),) * 2
    if not lo <= place <= hi:
        judged.wrong.append(f"at {at}, {server} is {place} of {len(row)}")


def _ranking(claim: Claim, row: Row) -> str:
    lower = METRICS[claim.metric][1] == "lower"
    order = sorted(row, key=lambda s: row[s].value if lower else -row[s].value)
    return " > ".join(f"{s} ({fmt(claim.metric, row[s].value)})" for s in order)


def rank_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    """winner / last / position / order at every comparison both runs allow, among every server
    the seed ranked, each measured with a trusted cell there."""
    rows, left, unknown = _rows(claim, run, load)
    if unknown:
        return uncounted(claim, theirs, unknown)
    if not rows:
        return nothing(claim, theirs, left, "no level where every ranked server has a trusted cell")
    judged = Judged([], [], [])
    for at, row in rows:
        _judge_row(claim, row, at, judged)
    ours = "; ".join(f"{at}: {_ranking(claim, row)}" for at, row in rows)
    n, direction = len(claim.ranked), BETTER[METRICS[claim.metric][1]]
    if judged.untested and not judged.wrong:
        why = "a swap the repeats cannot tell from noise: " + "; ".join(judged.untested)
        return Verdict(claim, NOT_COMPARABLE, theirs, ours, why)
    if judged.wrong:
        sentence = "; ".join(judged.wrong) + f" (all {n} servers the seed ranked; {direction})"
    else:
        levels = ", ".join(at for at, _ in rows)
        sentence = f"so at {levels}, all {n} servers the seed ranked ({direction})"
        if judged.noise:
            sentence += "; the seed calls it rough, and its swaps here are within the noise: "
            sentence += "; ".join(judged.noise)
    return verdict(claim, not judged.wrong, theirs, ours, sentence, left)
