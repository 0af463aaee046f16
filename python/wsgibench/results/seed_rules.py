"""The rule of each kind of seed claim: what "held" and "changed" mean, with the tolerances of
docs/seed-verdicts.md; each rule reads trusted points only and says on which levels it judged.
`judge` gives a claim its verdict: not comparable for a stated reason, else by its kind's rule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from wsgibench.results.seed_claims import RANKS, Claim, SeedClaims
from wsgibench.results.seed_ranks import rank_rule
from wsgibench.results.seed_trends import alike_rule, jump_rule, trend_rule
from wsgibench.results.seed_values import (
    EVERY_REQUEST,
    Value,
    nothing,
    series,
    shown,
    uncounted,
    verdict,
    where,
)
from wsgibench.results.seed_verdicts import (
    NOT_COMPARABLE,
    Point,
    RunView,
    Verdict,
    chosen_levels,
    dead,
    plain_theirs,
    setting_changes,
    theirs_text,
    usable,
    value_key,
)

TOLERANCE = 0.25  # figures and ratios: within 25 % of the seed's, unless the claim says otherwise
RATE_FLOOR = 0.01  # an error-rate figure is also held within 1 percentage point
Rule = Callable[[Claim, RunView, str, str], Verdict]


def _within(claim: Claim, ours: float, theirs: float) -> bool:
    tol = float(claim.get("tolerance", TOLERANCE))
    if claim.metric == "error_rate":
        return abs(ours - theirs) <= max(tol * theirs, RATE_FLOOR)
    return theirs != 0 and abs(ours / theirs - 1) <= tol


def _listed(claim: Claim, values: list[Value]) -> str:
    """ "3.10 ms at 100 connections, 4.00 ms at 1000 connections"."""
    return ", ".join(shown(claim, v) for v in values)


def _figure_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    server = claim.servers[0]
    got = series(claim, run, load, server)
    if got.unknown:
        return uncounted(claim, theirs, got.unknown)
    if not got.values:
        return nothing(claim, theirs, got.left)
    target, plain = float(claim.get("theirs")), plain_theirs(claim)
    off = [v for v in got.values if not _within(claim, v.value, target)]
    tol = float(claim.get("tolerance", TOLERANCE))
    if off:
        sentence = f"{server}: {_listed(claim, off)} is outside {tol:.0%} of {plain}"
    else:
        sentence = f"{server}: within {tol:.0%} of {plain} at every level judged"
    return verdict(claim, not off, theirs, _listed(claim, got.values), sentence, got.left)


def _ratio_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    a, b = claim.servers
    sa, sb = series(claim, run, load, a), series(claim, run, load, b)
    if sa.unknown or sb.unknown:
        return uncounted(claim, theirs, sa.unknown + sb.unknown)
    vb = {v.where: v.value for v in sb.values}
    ratios = [(v.where, v.value / vb[v.where]) for v in sa.values if vb.get(v.where)]
    left = sa.left + sb.left
    if not ratios:
        return nothing(claim, theirs, left, "no level where both have a trusted cell")
    t = claim.get("theirs")
    lo, hi = (float(t[0]), float(t[1])) if isinstance(t, list) else (float(t), float(t))
    tol = float(claim.get("tolerance", TOLERANCE))
    off = [(w, r) for w, r in ratios if not lo / (1 + tol) <= r <= hi * (1 + tol)]

    def listed(pairs: list[tuple[str, float]]) -> str:
        return ", ".join(f"{r:.2f}× at {w}" for w, r in pairs)

    if off:
        # reversed: on the other side of 1 from every ratio the seed allows (a range that spans 1
        # cannot be reversed, only missed in size)
        how = "reversed" if any(r < 1 <= lo or hi <= 1 < r for _, r in off) else "another size"
        sentence = f"{a} / {b} = {listed(off)}: {how}, outside {tol:.0%} of {plain_theirs(claim)}"
    else:
        sentence = f"{a} / {b} within {tol:.0%} of {plain_theirs(claim)} at every level judged"
    return verdict(claim, not off, theirs, listed(ratios), sentence, left)


def _bound_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    """at_most / at_least (strictly below / above with `strict`): every value of every server
    named on the right side of the bound."""
    bound, most, strict = float(claim.get("bound")), claim.kind == "at_most", claim.get("strict")
    seen, off, left, unknown = [], [], [], []
    for server in claim.servers:
        got = series(claim, run, load, server)
        left += got.left
        unknown += got.unknown
        for v in got.values:
            seen.append(f"{server} {shown(claim, v)}")
            if most:
                wrong = v.value >= bound if strict else v.value > bound
            else:
                wrong = v.value <= bound if strict else v.value < bound
            if wrong:
                off.append(seen[-1])
    if unknown:
        return uncounted(claim, theirs, unknown)
    if not seen:
        return nothing(claim, theirs, left)
    plain = plain_theirs(claim)
    sentence = f"{'; '.join(off)}: not {plain}" if off else f"{plain} at every level judged"
    return verdict(claim, not off, theirs, "; ".join(seen), sentence, left)


def _whole_failure(claim: Claim, p: Point) -> bool:
    """A failed cell whose errors or attempts no repeat recorded: counted as one test in which
    every request was an error."""
    return dead(claim, p) or bool(p.failed and p.values.get(value_key(claim, "attempts")) is None)


def _errors_at(claim: Claim, p: Point) -> tuple[float, float]:
    """Errors and attempts of a point as the claim counts them, in one test (a wholly failed
    cell: every request an error, a share of 1)."""
    if _whole_failure(claim, p):
        return 1.0, 1.0
    errors = float(p.values.get(value_key(claim, "errors")) or 0)
    return errors, float(p.values.get(value_key(claim, "attempts")) or 0)


def _said(claim: Claim, p: Point) -> str:
    if _whole_failure(claim, p):
        return f"{p.failed}, {EVERY_REQUEST}"
    return f"{_errors_at(claim, p)[0]:,.0f} errors" + (f" ({p.failed})" if p.failed else "")


def _no_errors_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    counting = "wsgibench" if claim.counting == "ours" else claim.counting
    seen, bad, left = [], [], []
    for server in claim.servers:
        kept, why = usable(claim, chosen_levels(claim, run.points[load][server]), server)
        left += why
        for p in kept:
            errors, _ = _errors_at(claim, p)
            seen.append(f"{server} {_said(claim, p)} at {where(run, load, p.level)}")
            if errors:
                bad.append(seen[-1])
    if not seen:
        return nothing(claim, theirs, left)
    sentence = (
        f"counted as {counting} counts them: {'; '.join(bad)}"
        if bad
        else f"no error at any level judged ({counting}'s counting)"
    )
    return verdict(claim, not bad, theirs, "; ".join(seen), sentence, left)


def _onset_rule(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict:
    """No error (share ≤ threshold) below the onset; errors above it at every level judged."""
    server = claim.servers[0]
    kept, left = usable(claim, chosen_levels(claim, run.points[load][server]), server)
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
        return nothing(claim, theirs, left, f"the run has no trusted level {side} ({edge})")

    def noisy(p: Point) -> bool:
        errors, attempts = _errors_at(claim, p)
        return errors / max(attempts, 1) > threshold  # (a threshold of 0: any error)

    shares = []
    for p in kept:
        errors, attempts = _errors_at(claim, p)
        share = (
            f"{p.failed}, {EVERY_REQUEST}"
            if _whole_failure(claim, p)
            else f"{errors / max(attempts, 1):.1%}"
        )
        shares.append(f"{share} at {where(run, load, p.level)}")
    early = [p for p in before_pts if noisy(p)]
    late = [p for p in after_pts if not noisy(p)]
    over = f" above {threshold:.0%}" if threshold else ""
    bits = [f"errors{over} already at {where(run, load, p.level)}" for p in early]
    bits += [f"no errors{over} at {where(run, load, p.level)}" for p in late]
    limit = over.strip() or "any"
    sentence = "; ".join(bits) if bits else f"{limit} errors {edge} and none before it"
    return verdict(claim, not bits, theirs, "; ".join(shares), f"{server}: {sentence}", left)


RULES: dict[str, Rule] = {
    "winner": rank_rule,
    "last": rank_rule,
    "position": rank_rule,
    "order": rank_rule,
    "figure": _figure_rule,
    "ratio": _ratio_rule,
    "at_most": _bound_rule,
    "at_least": _bound_rule,
    "no_errors": _no_errors_rule,
    "error_onset": _onset_rule,
    "steady": trend_rule,
    "rises": trend_rule,
    "falls": trend_rule,
    "no_fall": trend_rule,
    "alike": alike_rule,
    "jump": jump_rule,
}


def _unmeasured(claim: Claim, run: RunView, load: str, theirs: str) -> Verdict | None:
    """Not comparable when a server the claim is about, or one the seed ranked it among, was
    not measured in this run: each named with the reason stored for it."""
    named = claim.ranked if claim.kind in RANKS else claim.servers
    absent = [s for s in named if s not in run.points[load]]
    if not absent:
        return None
    why = "; ".join(f"{s}: {run.absent.get(s, 'not in this run')}" for s in absent)
    if claim.kind in RANKS and len(named) > len(claim.servers):
        why = f"the seed ranked {len(named)} servers, {len(absent)} not measured here: {why}"
    return Verdict(claim, NOT_COMPARABLE, theirs, "—", f"not measured: {why}")


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
    unmeasured = _unmeasured(claim, run, load, theirs)
    if unmeasured is not None:
        return unmeasured
    measured = run.points[load]
    if claim.get("level") is not None:
        ran = sorted({p.level for s in claim.servers for p in measured[s]})
        if float(claim.get("level")) not in ran:
            levels = ", ".join(f"{x:g}" for x in ran)
            at = where(run, load, float(claim.get("level")))
            why = f"the seed's level is {at}; this run measured {levels}"
            return Verdict(claim, NOT_COMPARABLE, theirs, "—", why)
    changed = setting_changes(claim, seed, run, load)
    found = RULES[claim.kind](claim, run, load, theirs)
    servers = dict.fromkeys([*claim.servers, *(claim.get("among") or [])])
    used = tuple(
        (s, p.level)
        for s in servers
        if s in measured
        for p in usable(claim, chosen_levels(claim, measured[s]), s)[0]
    )
    if changed:  # shown beside the seed's, never judged against it
        why = "the run changed the seed's setting: " + "; ".join(changed)
        if found.verdict == NOT_COMPARABLE:  # and nothing to show beside it: say why too
            return Verdict(
                claim, NOT_COMPARABLE, theirs, found.ours, f"{why}; and {found.sentence}"
            )
        # the figure shown beside the seed's rests on the cells its rule read
        return Verdict(claim, NOT_COMPARABLE, theirs, found.ours, why, rests_on=used)
    if found.verdict == NOT_COMPARABLE:
        return found
    return replace(found, rests_on=used)
