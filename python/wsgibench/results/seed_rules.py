"""The rule of each kind of seed claim: what "held" and "changed" mean, with the tolerances of
docs/seed-verdicts.md; each rule reads trusted points only and says on which levels it judged.
`judge` gives a claim its verdict: not comparable for a stated reason, else by its kind's rule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from wsgibench.results.seed_claims import METRICS, Claim, SeedClaims
from wsgibench.results.seed_verdicts import (
    CHANGED,
    ERROR_METRICS,
    HELD,
    NOT_COMPARABLE,
    Point,
    RunView,
    Verdict,
    chosen_levels,
    fmt,
    setting_changes,
    theirs_text,
    usable,
    value_key,
)

TOLERANCE = 0.25  # figures and ratios: within 25 % of the seed's, unless the claim says otherwise
RATE_FLOOR = 0.01  # an error-rate figure is also held within 1 percentage point
Values = list[tuple[str, float]]  # (where, value): a level, or "max" / "min" / "all levels"
Rule = Callable[[Claim, RunView, str, str], Verdict]


def _where(run: RunView, load: str, level: float) -> str:
    return f"{level:g} {run.level_unit.get(load, '')}".strip()


def _series(claim: Claim, run: RunView, load: str, server: str) -> tuple[list[Point], list[str]]:
    return usable(claim, chosen_levels(claim, run.points[load][server]), server)


def _aggregate(claim: Claim, run: RunView, load: str, points: list[Point]) -> Values:
    """A server's values as the claim reads them: each level, their max or min, or their sum
    (errors summed over every level, an error rate as all errors over all attempts)."""
    key = value_key(claim)
    over = claim.get("over", "sum" if claim.metric in ERROR_METRICS else "each")
    if over == "sum":
        if claim.metric == "error_rate":
            errors = sum(p.values.get(value_key(claim, "errors")) or 0 for p in points)
            attempts = sum(p.values.get(value_key(claim, "attempts")) or 0 for p in points)
            return [("all levels", errors / attempts)] if attempts else []
        return [("all levels", sum(p.values.get(key) or 0 for p in points))] if points else []
    found = [
        (_where(run, load, p.level), float(v))
        for p in points
        if (v := p.values.get(key)) is not None
    ]
    if over == "each" or not found:
        return found
    pick = max if over == "max" else min
    return [(over, pick(v for _, v in found))]


def _verdict(
    claim: Claim, held: bool, theirs: str, ours: str, sentence: str, left: list[str]
) -> Verdict:
    if left:
        sentence += f" (left out: {'; '.join(left)})"
    return Verdict(claim, HELD if held else CHANGED, theirs, ours, sentence)


def _nothing(claim: Claim, theirs: str, left: list[str], what: str = "no trusted cell") -> Verdict:
    why = what + (f": {'; '.join(left)}" if left else "")
    return Verdict(claim, NOT_COMPARABLE, theirs, "—", why)


def _compared(
    claim: Claim, run: RunView, load: str
) -> tuple[list[tuple[str, dict[str, float]]], list[str], list[str]]:
    """The comparisons a rank claim is judged on: per level (or once, over max/min), each the
    values of every server of `among` measured with a trusted cell there; and what was left out."""
    among = list(claim.get("among") or claim.servers)
    measured = [s for s in among if s in run.points[load]]
    dropped = [s for s in among if s not in run.points[load]]
    left: list[str] = []
    series: dict[str, Values] = {}
    for server in measured:
        kept, why = _series(claim, run, load, server)
        left += why
        series[server] = _aggregate(claim, run, load, kept)
    wheres = [w for w, _ in series[claim.servers[0]]] if claim.servers[0] in series else []
    out = []
    for where in wheres:
        row = {s: v for s in measured for w, v in series[s] if w == where}
        if len(row) == len(measured):
            out.append((where, row))
        else:
            left.append(f"{where}: not every server has a trusted cell")
    return out, dropped, left


def _ranked(claim: Claim, row: dict[str, float]) -> list[str]:
    lower = METRICS[claim.metric][1] == "lower"
    return sorted(row, key=lambda s: row[s] if lower else -row[s])


def _rank_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    """winner / last / position / order, at every comparison both runs allow."""
    compared, dropped, left = _compared(claim, run, load)
    if not compared:
        return _nothing(claim, theirs, left, "no level where every server has a trusted cell")
    wrong, mine = [], []
    for where, row in compared:
        ranked = _ranked(claim, row)
        mine.append(f"{where}: " + " > ".join(ranked))
        ok, why = _rank_holds(claim, ranked, row)
        if not ok:
            wrong.append(f"at {where}, {why}")
    note = f" ({', '.join(dropped)} not measured)" if dropped else ""
    n = len(compared[0][1])
    if wrong:
        sentence = "; ".join(wrong) + f" among {n} servers{note}"
    else:
        sentence = f"so at {', '.join(w for w, _ in compared)} among {n} servers{note}"
    return _verdict(claim, not wrong, theirs, "; ".join(mine), sentence, left)


def _rank_holds(claim: Claim, ranked: list[str], row: dict[str, float]) -> tuple[bool, str]:
    m = claim.metric
    named = claim.servers
    if claim.kind in ("winner", "last"):
        ends = ranked[: len(named)] if claim.kind == "winner" else ranked[-len(named) :]
        if set(ends) == set(named):
            return True, ""
        intruders = [s for s in ends if s not in named]
        return (
            False,
            f"{', '.join(intruders)} ({', '.join(fmt(m, row[s]) for s in intruders)}) "
            + (
                f"{'ahead of' if claim.kind == 'winner' else 'behind'} "
                + ", ".join(f"{s} ({fmt(m, row[s])})" for s in named if s not in ends)
            ),
        )
    if claim.kind == "position":
        place = ranked.index(named[0]) + 1
        return place == int(claim.get("position")), f"{named[0]} is {place} of {len(ranked)}"
    swaps = [
        f"{b} ({fmt(m, row[b])}) ahead of {a} ({fmt(m, row[a])})"
        for a, b in zip(named, named[1:], strict=False)
        if ranked.index(a) > ranked.index(b)
    ]
    return not swaps, "; ".join(swaps)


def _within(claim: Claim, ours: float, theirs: float) -> bool:
    tol = float(claim.get("tolerance", TOLERANCE))
    if claim.metric == "error_rate":
        return abs(ours - theirs) <= max(tol * theirs, RATE_FLOOR)
    return theirs != 0 and abs(ours / theirs - 1) <= tol


def _listed(values: Values, metric: str | None = None) -> str:
    """ "3.10 ms at 100 connections, 4.00 ms at 1000 connections" (a ratio: "4.60× at ...")."""
    return ", ".join(f"{fmt(metric, v) if metric else f'{v:.2f}×'} at {w}" for w, v in values)


def _figure_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    server = claim.servers[0]
    kept, left = _series(claim, run, load, server)
    values = _aggregate(claim, run, load, kept)
    if not values:
        return _nothing(claim, theirs, left)
    target = float(claim.get("theirs"))
    off = [(w, v) for w, v in values if not _within(claim, v, target)]
    ours = _listed(values, claim.metric)
    tol = float(claim.get("tolerance", TOLERANCE))
    if off:
        sentence = f"{server}: {_listed(off, claim.metric)} is outside {tol:.0%} of {theirs}"
    else:
        sentence = f"{server}: within {tol:.0%} of {theirs} at every level judged"
    return _verdict(claim, not off, theirs, ours, sentence, left)


def _ratio_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    a, b = claim.servers
    (ka, la), (kb, lb) = _series(claim, run, load, a), _series(claim, run, load, b)
    va, vb = dict(_aggregate(claim, run, load, ka)), dict(_aggregate(claim, run, load, kb))
    ratios = [(w, va[w] / vb[w]) for w in va if w in vb and vb[w]]
    if not ratios:
        return _nothing(claim, theirs, la + lb, "no level where both have a trusted cell")
    t = claim.get("theirs")
    lo, hi = (float(t[0]), float(t[1])) if isinstance(t, list) else (float(t), float(t))
    tol = float(claim.get("tolerance", TOLERANCE))
    off = [(w, r) for w, r in ratios if not lo / (1 + tol) <= r <= hi * (1 + tol)]
    ours = _listed(ratios)
    if off:
        how = "reversed" if any((r < 1) != (lo < 1) for _, r in off) else "another size"
        sentence = f"{a} / {b} = {_listed(off)}: {how}, outside {tol:.0%} of {theirs}"
    else:
        sentence = f"{a} / {b} within {tol:.0%} of {theirs} at every level judged"
    return _verdict(claim, not off, theirs, ours, sentence, la + lb)


def _bound_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    """at_most / at_least: every value of every server named on the right side of the bound."""
    bound, most = float(claim.get("bound")), claim.kind == "at_most"
    seen, off, left = [], [], []
    for server in claim.servers:
        kept, why = _series(claim, run, load, server)
        left += why
        for w, v in _aggregate(claim, run, load, kept):
            seen.append(f"{server} {fmt(claim.metric, v)} at {w}")
            if (v > bound) if most else (v < bound):
                off.append(seen[-1])
    if not seen:
        return _nothing(claim, theirs, left)
    side = "at most" if most else "at least"
    sentence = (
        f"{'; '.join(off)}: not {side} {theirs}"
        if off
        else f"{side} {theirs} at every level judged"
    )
    return _verdict(claim, not off, theirs, "; ".join(seen), sentence, left)


def _errors_at(claim: Claim, p: Point) -> tuple[float, float]:
    """Errors and attempts of a point as the claim counts them (a failed cell: all failed)."""
    if p.failed:
        return 1.0, 1.0
    errors = float(p.values.get(value_key(claim, "errors")) or 0)
    return errors, float(p.values.get(value_key(claim, "attempts")) or 0)


def _no_errors_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    counting = "wsgibench" if claim.counting == "ours" else claim.counting
    seen, bad, left = [], [], []
    for server in claim.servers:
        kept, why = _series(claim, run, load, server)
        left += why
        for p in kept:
            errors, _ = _errors_at(claim, p)
            where = _where(run, load, p.level)
            seen.append(f"{server} {p.failed or f'{errors:,.0f} errors'} at {where}")
            if errors:
                bad.append(seen[-1])
    if not seen:
        return _nothing(claim, theirs, left)
    sentence = (
        f"counted as {counting} counts them: {'; '.join(bad)}"
        if bad
        else f"no error at any level judged ({counting}'s counting)"
    )
    return _verdict(claim, not bad, theirs, "; ".join(seen), sentence, left)


def _onset_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    """No error (share ≤ threshold) below the onset; errors above it at every level judged."""
    server = claim.servers[0]
    kept, left = _series(claim, run, load, server)
    frm, above = claim.get("from_level"), claim.get("above")
    edge_level = float(frm if frm is not None else above)

    def after(level: float) -> bool:
        return level >= edge_level if frm is not None else level > edge_level

    edge = f"from {frm:g}" if frm is not None else f"past {above:g}"
    threshold = float(claim.get("threshold", 0.0))
    before_pts = [p for p in kept if not after(p.level)]
    after_pts = [p for p in kept if after(p.level)]
    if not before_pts or not after_pts:
        side = "below the onset" if not before_pts else "at or past the onset"
        return _nothing(claim, theirs, left, f"the run has no trusted level {side} ({edge})")

    def noisy(p: Point) -> bool:
        errors, attempts = _errors_at(claim, p)
        return errors > 0 and (threshold == 0 or errors / max(attempts, 1) > threshold)

    shares = []
    for p in kept:
        errors, attempts = _errors_at(claim, p)
        shares.append(
            f"{p.failed or f'{errors / max(attempts, 1):.1%}'} at {_where(run, load, p.level)}"
        )
    early = [p for p in before_pts if noisy(p)]
    late = [p for p in after_pts if not noisy(p)]
    bits = [f"errors already at {_where(run, load, p.level)}" for p in early]
    bits += [f"no errors at {_where(run, load, p.level)}" for p in late]
    limit = f"above {threshold:.0%}" if threshold else "any"
    sentence = "; ".join(bits) if bits else f"{limit} errors {edge} and none before it"
    return _verdict(claim, not bits, theirs, "; ".join(shares), f"{server}: {sentence}", left)


def _steady_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    tol = float(claim.get("tolerance", TOLERANCE))
    seen, off, left = [], [], []
    for server in claim.servers:
        kept, why = _series(claim, run, load, server)
        left += why
        values = [v for _, v in _aggregate(claim, run, load, kept)]
        if len(values) < 2:
            left.append(f"{server}: fewer than two trusted levels")
            continue
        spread = max(values) / min(values) if min(values) else float("inf")
        seen.append(f"{server} {fmt(claim.metric, min(values))}–{fmt(claim.metric, max(values))}")
        if spread > 1 + tol:
            off.append(f"{server} grows {spread:.2f}×")
    if not seen:
        return _nothing(claim, theirs, left, "no server with two trusted levels")
    sentence = "; ".join(off) if off else f"each within {tol:.0%} across the levels judged"
    return _verdict(claim, not off, theirs, "; ".join(seen), sentence, left)


def _jump_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    server = claim.servers[0]
    kept, left = _series(claim, run, load, server)
    above, factor = float(claim.get("above")), float(claim.get("factor"))
    values = _aggregate(claim, run, load, kept)
    levels = [p.level for p in kept if p.values.get(value_key(claim)) is not None]
    before = [v for (w, v), x in zip(values, levels, strict=False) if x <= above]
    after = [v for (w, v), x in zip(values, levels, strict=False) if x > above]
    if not before or not after:
        return _nothing(
            claim, theirs, left, f"the run has no trusted level on each side of {above:g}"
        )
    grew = after[0] / before[-1] if before[-1] else float("inf")
    ours = f"{fmt(claim.metric, before[-1])} → {fmt(claim.metric, after[0])} ({grew:.1f}×)"
    sentence = f"{server}: {grew:.1f}× past {above:g} (the claim: at least {factor:g}×)"
    return _verdict(claim, grew >= factor, theirs, ours, sentence, left)


RULES: dict[str, Rule] = {
    "winner": _rank_rule,
    "last": _rank_rule,
    "position": _rank_rule,
    "order": _rank_rule,
    "figure": _figure_rule,
    "ratio": _ratio_rule,
    "at_most": _bound_rule,
    "at_least": _bound_rule,
    "no_errors": _no_errors_rule,
    "error_onset": _onset_rule,
    "steady": _steady_rule,
    "jump": _jump_rule,
}


def judge(claim: Claim, seed: SeedClaims, run: RunView) -> Verdict:
    """The verdict on one claim: not comparable for a stated reason, else by its kind's rule."""
    theirs = theirs_text(claim)
    if claim.get("not_measured"):
        return Verdict(
            claim, NOT_COMPARABLE, theirs, "—", f"not measured: {claim.get('not_measured')}"
        )
    load = claim.get("load") or (next(iter(run.points)) if len(run.points) == 1 else None)
    if load is None or load not in run.points:
        why = f"this run has no load {load!r}" if load else "the claim names no load"
        return Verdict(claim, NOT_COMPARABLE, theirs, "—", why)
    measured = run.points[load]
    absent = [s for s in claim.servers if s not in measured]
    if absent:
        why = "; ".join(f"{s}: {run.absent.get(s, 'not in this run')}" for s in absent)
        return Verdict(claim, NOT_COMPARABLE, theirs, "—", f"not measured: {why}")
    if claim.get("level") is not None:
        ran = sorted({p.level for s in claim.servers for p in measured[s]})
        if float(claim.get("level")) not in ran:
            unit = run.level_unit.get(load, "")
            levels = ", ".join(f"{x:g}" for x in ran)
            why = f"the seed's level is {claim.get('level'):g} {unit}; this run measured {levels}"
            return Verdict(claim, NOT_COMPARABLE, theirs, "—", why)
    changed = setting_changes(claim, seed, run, load)
    found = RULES[claim.kind](claim, run, load, theirs)
    if changed:  # shown beside the seed's, never judged against it
        why = "the run changed the seed's setting: " + "; ".join(changed)
        if found.verdict == NOT_COMPARABLE:  # and nothing to show beside it: say why too
            why += f"; and {found.sentence}"
        return Verdict(claim, NOT_COMPARABLE, theirs, found.ours, why)
    if found.verdict == NOT_COMPARABLE:
        return found
    servers = dict.fromkeys([*claim.servers, *(claim.get("among") or [])])
    used = tuple(
        (s, p.level)
        for s in servers
        if s in measured
        for p in usable(claim, chosen_levels(claim, measured[s]), s)[0]
    )
    return replace(found, rests_on=used)
