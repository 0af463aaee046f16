"""The seed rules' edges a mutation run (bench/mutation) found untested: a tolerance met exactly,
cells that cannot be counted (a dead cell whose errors no repeat recorded) named in the reason,
the cells left out named beside a verdict whichever server they belong to, a failed cell counted
as every request an error only when its errors were not recorded, and the ratio's "reversed" at
exactly 1."""

from __future__ import annotations

import pytest

from wsgibench.results.seed_claims import BadClaims, parse
from wsgibench.results.seed_rules import judge
from wsgibench.results.seed_verdicts import (
    CHANGED,
    HELD,
    NOT_COMPARABLE,
    Point,
    RunView,
    Verdict,
    plain_theirs,
    theirs_text,
)

from .test_seed_rule_words import C, said
from .test_seed_rules import SEED, claim, errors_run, run

DIED = "disqualified (died)"
C3 = ("100", "1000", "10000")  # the levels of test_seed_rules.run


def points(**per_server: list[Point]) -> RunView:
    return RunView({"l": dict(per_server)}, {"server_cpus": 2}, {}, {"l": C})


def counted(level: float, errors: int, attempts: int | None = 100, **kw) -> Point:
    values = {"errors:wrk": errors, "errors": 0}
    if attempts is not None:
        values |= {"attempts:wrk": attempts, "attempts": attempts}
    return Point(level, values, **kw)


def untrusted(level: float) -> Point:
    return Point(level, {}, untrusted="invalid (x)")


def whole(c, r) -> Verdict:
    return judge(c, SEED, r)


def test_a_tolerance_met_exactly_holds():
    # 0.625 is 0.5 + 25 % of it, exactly (binary fractions); an error rate of 1 % is the floor
    rate = claim("figure", "error_rate", server="a", theirs=0.5, counting="wrk")
    assert said(rate, errors_run({"a": [(5, 8)]}))[0] == HELD
    zero = claim("figure", "error_rate", server="a", theirs=0.0, counting="wrk")
    assert said(zero, errors_run({"a": [(1, 100)]}))[0] == HELD
    assert said(zero, errors_run({"a": [(2, 100)]}))[0] == CHANGED
    # a figure of 1 is a figure like any other; one of 0 has no share to be within
    one = claim("figure", server="a", theirs=1.0)
    assert said(one, run({"a": [1, 1, 1]}))[0] == HELD
    assert said(claim("figure", server="a", theirs=0.0), run({"a": [0, 0, 0]}))[0] == CHANGED


def test_a_cell_that_cannot_be_counted_is_named_in_the_reason():
    def gone(server: str) -> str:
        return (
            f"{server} at 100: {DIED} with no repeat stored, so how many errors wrk would have "
            "counted there is unknown"
        )

    dead, fine = Point(100, {}, failed=DIED), counted(100, 0)
    fig = claim("figure", "errors", server="a", theirs=0.0, counting="wrk")
    assert whole(fig, points(a=[dead])) == Verdict(
        fig, NOT_COMPARABLE, theirs_text(fig), "—", f"cannot be counted: {gone('a')}"
    )
    ratio = claim("ratio", "errors", a="a", b="b", theirs=1.0, counting="wrk")
    for a, b, named in ((dead, fine, [gone("a")]), (dead, dead, [gone("a"), gone("b")])):
        assert said(ratio, points(a=[a], b=[b])) == (
            NOT_COMPARABLE,
            "—",
            "cannot be counted: " + "; ".join(named),
        )
    assert said(ratio, points(a=[fine], b=[dead]))[2] == f"cannot be counted: {gone('b')}"
    most = claim("at_most", "errors", servers=["a", "b"], bound=5.0, counting="wrk")
    assert whole(most, points(a=[dead], b=[dead])) == Verdict(
        most, NOT_COMPARABLE, theirs_text(most), "—", f"cannot be counted: {gone('a')}; {gone('b')}"
    )


def test_the_cells_left_out_are_named_for_every_server():
    bad = "a at 100: invalid (x); b at 1000: invalid (x)"
    most = claim("at_most", servers=["a", "b"], bound=50.0)
    assert said(most, run({"a": [None, 10, 10], "b": [10, None, 10]}))[::2] == (
        HELD,
        f"at most 50.00 req/s at every level judged (left out: {bad})",
    )
    assert said(most, run({"a": [60, 70, 10], "b": [10, 10, 10]}))[2] == (
        f"a 60.00 req/s at 100 {C}; a 70.00 req/s at 1000 {C}: not at most 50.00 req/s"
    )
    assert whole(most, run({"a": [None, None, None], "b": [None, None, None]})) == Verdict(
        most,
        NOT_COMPARABLE,
        theirs_text(most),
        "—",
        "no trusted cell: " + "; ".join(f"{s} at {lv}: invalid (x)" for s in "ab" for lv in C3),
    )
    ratio = claim("ratio", a="a", b="b", theirs=1.0)
    assert said(ratio, run({"a": [None, 10, 10], "b": [10, None, 10]}))[::2] == (
        HELD,
        f"a / b within 25% of 1× at every level judged (left out: {bad})",
    )


@pytest.mark.parametrize(
    "theirs, ratio, how",
    [
        (2.0, 1.5, "another size"),  # below 2 / 1.25 = 1.6: outside, on the same side of 1
        (2.0, 1.0, "another size"),  # exactly 1 is on neither side
        (1.5, 0.5, "reversed"),
        ([1.0, 2.0], 0.5, "reversed"),  # a range from 1: below it is the other side
        ([0.5, 1.0], 2.0, "reversed"),  # a range up to 1: above it is the other side
        (0.5, 1.0, "another size"),
    ],
)
def test_a_ratio_is_reversed_only_on_the_other_side_of_one(theirs, ratio, how):
    c = claim("ratio", a="a", b="b", theirs=theirs, tolerance=0.25 if theirs == 2.0 else 0.0)
    assert said(c, run({"a": [10 * ratio], "b": [10]}, levels=(100,)))[::2] == (
        CHANGED,
        f"a / b = {ratio:.2f}× at 100 {C}: {how}, outside "
        + ("25% of 2×" if theirs == 2.0 else f"0% of {plain_theirs(c)}"),
    )


def test_no_errors_counts_a_failed_cell_as_every_request_an_error_only_when_unrecorded():
    none = claim("no_errors", "errors", servers=["a"], counting="wrk")
    # a disqualified cell whose repeats recorded 3 errors in 100: those 3
    assert said(none, points(a=[counted(100, 3, failed="disqualified (slow)")]))[1] == (
        f"a 3 errors (disqualified (slow)) at 100 {C}"
    )
    # dead, or its errors recorded without the attempts: every request an error
    for p in (Point(100, {}, failed=DIED), counted(100, 0, None, failed=DIED)):
        assert said(none, points(a=[p]))[:2] == (
            CHANGED,
            f"a {DIED}, every request an error at 100 {C}",
        )
    # a measured cell with no attempts recorded is not a failure: its own count
    assert said(none, points(a=[counted(100, 0, None)]))[::2] == (
        HELD,
        "no error at any level judged (wrk's counting)",
    )


def test_no_errors_names_every_cell_left_out_and_each_with_errors():
    none = claim("no_errors", "errors", servers=["a", "b"], counting="wrk")
    mixed = points(a=[untrusted(100), counted(200, 1)], b=[counted(100, 2), untrusted(200)])
    assert said(none, mixed)[2] == (
        f"counted as wrk counts them: a 1 errors at 200 {C}; b 2 errors at 100 {C} "
        "(left out: a at 100: invalid (x); b at 200: invalid (x))"
    )
    assert whole(none, points(a=[untrusted(100)], b=[untrusted(200)])) == Verdict(
        none,
        NOT_COMPARABLE,
        theirs_text(none),
        "—",
        "no trusted cell: a at 100: invalid (x); b at 200: invalid (x)",
    )
    ours = claim("no_errors", "errors", servers=["a"])
    assert said(ours, errors_run({"a": [(5, 100)]}))[::2] == (
        HELD,
        "no error at any level judged (wsgibench's counting)",
    )


def test_an_onset_counts_failed_cells_and_tiny_tests_as_they_were():
    past = claim("error_onset", "errors", server="a", above=100, threshold=0.6, counting="wrk")
    # past the onset: dead (every request an error, 100 %), one request that failed (100 %)
    held = points(a=[counted(100, 0), Point(200, {}, failed=DIED), counted(1000, 1, 1)])
    assert said(past, held) == (
        HELD,
        f"0.0% at 100 {C}; {DIED}, every request an error at 200 {C}; 100.0% at 1000 {C}",
        "a: above 60% errors past 100 and none before it",
    )
    # a disqualified cell that recorded 3 % errors: under the threshold, as recorded
    low = points(a=[counted(100, 0), counted(200, 3, failed="disqualified (slow)")])
    assert said(past, low)[::2] == (CHANGED, f"a: no errors above 60% at 200 {C}")
    gap = points(a=[untrusted(100), counted(200, 9)])
    assert said(past, gap) == (
        NOT_COMPARABLE,
        "—",
        "the run has no trusted level below the onset (past 100): a at 100: invalid (x)",
    )
    left = points(a=[counted(100, 0), untrusted(150), counted(200, 90)])
    assert said(past, left)[2] == (
        "a: above 60% errors past 100 and none before it (left out: a at 150: invalid (x))"
    )


def test_a_server_not_measured_is_named_with_what_the_seed_ranked():
    def sentence(c) -> str:
        absent = RunView({"l": {"a": [counted(100, 0)]}}, {}, {"c": "unavailable (x)"}, {"l": C})
        v = whole(c, absent)
        assert v.verdict == NOT_COMPARABLE and v.ours == "—"
        return v.sentence

    among = claim("winner", servers=["a"], among=["a", "b", "c"])
    assert sentence(among) == (
        "not measured: the seed ranked 3 servers, 2 not measured here: b: not in this run; "
        "c: unavailable (x)"
    )
    # an order of the servers it names: nothing more was ranked than it names
    order = claim("order", servers=["a", "c"])
    assert sentence(order) == "not measured: c: unavailable (x)"
    both = claim("at_most", servers=["b", "c"], bound=1.0)
    assert sentence(both) == "not measured: b: not in this run; c: unavailable (x)"


def test_a_level_not_measured_is_said_with_its_unit_or_without_one():
    at = claim("figure", server="a", theirs=1.0, level=500)
    bare = RunView({"l": {"a": [Point(100, {"rps_ok": 1.0})]}}, {}, {}, {})
    assert said(at, bare)[2] == "the seed's level is 500; this run measured 100"
    assert said(at, run({"a": [1, 1, 1]}))[2] == (
        f"the seed's level is 500 {C}; this run measured 100, 1000, 10000"
    )


def test_error_claims_must_count_errors():
    head = 'seed="0"\nfile="f"\ntitle="t"\n'
    onset = '[[claim]]\nid="a"\nkind="no_errors"\nwhat="w"\nmetric="errors"\nservers=["s"]\n'
    onset += 'cite=[{line=1, text="t"}]\n'
    assert parse("x", head + onset).claims[0].metric == "errors"
    with pytest.raises(BadClaims, match="a no_errors claim counts errors"):
        parse("x", head + onset.replace('"errors"', '"error_rate"'))
