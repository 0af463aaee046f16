"""What each seed rule says, word for word (results/seed_rules.py): the verdict, our side and the
sentence, on runs whose truth is worked out by hand in each case: the tolerances at their edges
(25 % by default, a claim's own, an error rate's 1-point floor), a ratio reversed or of another
size, strict and inclusive bounds, errors as the seed's tool counts them, and an onset of errors
with and without a threshold. A mutation run (bench/mutation) found these words untested."""

from __future__ import annotations

from wsgibench.results.seed_rules import judge
from wsgibench.results.seed_verdicts import (
    CHANGED,
    HELD,
    NOT_COMPARABLE,
    RunView,
    Verdict,
    theirs_text,
)

from .test_seed_rules import SEED, claim, errors_run, run

C = "connections"


def said(c, r) -> tuple[str, str, str]:
    """The verdict, ours and the sentence; the verdict is of this claim, beside the seed's side."""
    v = judge(c, SEED, r)
    assert v.claim is c and v.theirs == theirs_text(c), v
    return v.verdict, v.ours, v.sentence


def test_a_figure_within_its_tolerance_at_every_level():
    fig = claim("figure", "latency_mean_ms", server="a", theirs=100.0)
    # -10 %, +25 % (the edge, within), +10 %
    assert said(fig, run({"a": [90, 125, 110]}, "latency_mean_ms")) == (
        HELD,
        f"90.00 ms at 100 {C}, 125 ms at 1000 {C}, 110 ms at 10000 {C}",
        "a: within 25% of 100 ms at every level judged",
    )
    # -30 % and +26 % are outside, each named
    assert said(fig, run({"a": [70, 126, 100]}, "latency_mean_ms"))[::2] == (
        CHANGED,
        f"a: 70.00 ms at 100 {C}, 126 ms at 1000 {C} is outside 25% of 100 ms",
    )
    # the claim's own tolerance: +11 % is outside 10 %
    tight = claim("figure", "latency_mean_ms", server="a", theirs=100.0, tolerance=0.1)
    assert said(tight, run({"a": [100, 111, 100]}, "latency_mean_ms"))[::2] == (
        CHANGED,
        f"a: 111 ms at 1000 {C} is outside 10% of 100 ms",
    )
    # an untrusted cell is left out, and said
    assert said(fig, run({"a": [100, None, 100]}, "latency_mean_ms")) == (
        HELD,
        f"100 ms at 100 {C}, 100 ms at 10000 {C}",
        "a: within 25% of 100 ms at every level judged (left out: a at 1000: invalid (x))",
    )
    assert said(fig, run({"a": [None, None, None]}, "latency_mean_ms")) == (
        NOT_COMPARABLE,
        "—",
        "no trusted cell: a at 100: invalid (x); a at 1000: invalid (x); a at 10000: invalid (x)",
    )


def test_an_error_rate_figure_is_held_within_one_point():
    # the seed's 2 %: 25 % of it is half a point, the floor one point; errors summed over levels
    rate = claim("figure", "error_rate", server="a", theirs=0.02, counting="wrk")
    assert said(rate, errors_run({"a": [(6, 100), (0, 100)]}))[:2] == (HELD, "3.0% at all levels")
    assert said(rate, errors_run({"a": [(7, 100), (0, 100)]})) == (
        CHANGED,
        "3.5% at all levels",
        "a: 3.5% at all levels is outside 25% of 2.0%",
    )


def test_a_ratio_at_its_edges_reversed_or_of_another_size():
    rat = claim("ratio", a="a", b="b", theirs=2.0)
    # 2 / 1.25 = 1.6 and 2 × 1.25 = 2.5: both edges within
    assert said(rat, run({"a": [16, 25, 10], "b": [10, 10, 5]})) == (
        HELD,
        f"1.60× at 100 {C}, 2.50× at 1000 {C}, 2.00× at 10000 {C}",
        "a / b within 25% of 2× at every level judged",
    )
    assert said(rat, run({"a": [40, 20, 20], "b": [10, 10, 10]}))[2] == (
        f"a / b = 4.00× at 100 {C}: another size, outside 25% of 2×"
    )
    assert said(rat, run({"a": [5, 20, 20], "b": [10, 10, 10]}))[2] == (
        f"a / b = 0.50× at 100 {C}: reversed, outside 25% of 2×"
    )
    # a range that spans 1 cannot be reversed: 2.1× is only outside it
    span = claim("ratio", a="a", b="b", theirs=[0.5, 2.0], tolerance=0.0)
    assert said(span, run({"a": [5, 20, 21], "b": [10, 10, 10]}))[2] == (
        f"a / b = 2.10× at 10000 {C}: another size, outside 0% of 0.5–2×"
    )
    below = claim("ratio", a="a", b="b", theirs=[0.4, 0.5], tolerance=0.0)
    assert said(below, run({"a": [5, 5, 12], "b": [10, 10, 10]}))[2] == (
        f"a / b = 1.20× at 10000 {C}: reversed, outside 0% of 0.4–0.5×"
    )
    assert said(rat, run({"a": [None, 20, 20], "b": [10, None, None]})) == (
        NOT_COMPARABLE,
        "—",
        "no level where both have a trusted cell: a at 100: invalid (x); b at 1000: invalid (x);"
        " b at 10000: invalid (x)",
    )


def test_bounds_strict_and_inclusive():
    core = "% of one core"
    most = claim("at_most", "cpu_pct", servers=["a", "b"], bound=50.0, strict=True)
    verdict, ours, sentence = said(most, run({"a": [30, 40, 49], "b": [50, 10, 10]}, "cpu_pct"))
    assert verdict == CHANGED and ours.startswith(f"a 30.00 {core} at 100 {C}; a 40.00 {core}")
    assert sentence == f"b 50.00 {core} at 100 {C}: not below 50.00 {core}"
    inclusive = claim("at_most", "cpu_pct", servers=["a"], bound=50.0)
    assert said(inclusive, run({"a": [30, 40, 50]}, "cpu_pct"))[::2] == (
        HELD,
        f"at most 50.00 {core} at every level judged",
    )
    least = claim("at_least", "cpu_pct", servers=["a"], bound=50.0)
    assert said(least, run({"a": [50, 60, 49]}, "cpu_pct"))[::2] == (
        CHANGED,
        f"a 49.00 {core} at 10000 {C}: not at least 50.00 {core}",
    )
    more = claim("at_least", "cpu_pct", servers=["a"], bound=50.0, strict=True)
    assert said(more, run({"a": [50, 60, 70]}, "cpu_pct"))[::2] == (
        CHANGED,
        f"a 50.00 {core} at 100 {C}: not more than 50.00 {core}",
    )


def test_no_errors_names_each_level_with_errors():
    none = claim("no_errors", "errors", servers=["a", "b"], counting="wrk")
    assert said(none, errors_run({"a": [(0, 100), (2, 100)], "b": [(0, 100), (0, 100)]})) == (
        CHANGED,
        f"a 0 errors at 100 {C}; a 2 errors at 200 {C}; b 0 errors at 100 {C}; b 0 errors at "
        f"200 {C}",
        f"counted as wrk counts them: a 2 errors at 200 {C}",
    )
    assert said(none, errors_run({"a": [(0, 100)], "b": [(0, 100)]}))[2] == (
        "no error at any level judged (wrk's counting)"
    )


def test_an_onset_of_errors_from_a_level_or_past_one():
    frm = claim("error_onset", "errors", server="a", from_level=1000, counting="wrk")
    assert said(frm, errors_run({"a": [(0, 100), (0, 100), (5, 100), (9, 100)]})) == (
        HELD,
        f"0.0% at 100 {C}; 0.0% at 200 {C}; 5.0% at 1000 {C}; 9.0% at 10000 {C}",
        "a: any errors from 1000 and none before it",
    )
    assert said(frm, errors_run({"a": [(0, 100), (1, 100), (0, 100), (9, 100)]}))[2] == (
        f"a: errors already at 200 {C}; no errors at 1000 {C}"
    )
    # past 200 with a 5 % threshold: 200 itself is before it; 5 % is not above 5 %
    past = claim("error_onset", "errors", server="a", above=200, threshold=0.05, counting="wrk")
    assert said(past, errors_run({"a": [(0, 100), (9, 100), (5, 100), (6, 100)]}))[2] == (
        f"a: errors above 5% already at 200 {C}; no errors above 5% at 1000 {C}"
    )
    assert said(past, errors_run({"a": [(0, 100), (5, 100), (6, 100), (6, 100)]}))[::2] == (
        HELD,
        "a: above 5% errors past 200 and none before it",
    )
    late = claim("error_onset", "errors", server="a", above=10000, counting="wrk")
    assert said(late, errors_run({"a": [(0, 100), (0, 100), (0, 100), (9, 100)]}))[2] == (
        "the run has no trusted level at or past the onset (past 10000)"
    )


def test_what_is_not_comparable_says_why_and_shows_nothing_it_did_not_judge():
    fig = claim("figure", "latency_mean_ms", server="a", theirs=100.0, level=1000)
    values = {"a": [100, 100, 100]}

    def whole(c, r) -> Verdict:
        return judge(c, SEED, r)

    gone = claim("figure", server="a", theirs=1.0, not_measured="the seed's PHP reference")
    assert whole(gone, run(values)) == Verdict(
        gone, NOT_COMPARABLE, "1.00 req/s", "—", "not measured: the seed's PHP reference"
    )
    two_loads = RunView({"l": {}, "m": {}}, {}, {}, {})
    assert whole(fig, two_loads) == Verdict(
        fig, NOT_COMPARABLE, "100 ms", "—", "the claim names no load"
    )
    elsewhere = claim("figure", "latency_mean_ms", server="a", theirs=100.0, load="x")
    assert whole(elsewhere, run(values, "latency_mean_ms")) == Verdict(
        elsewhere, NOT_COMPARABLE, "100 ms", "—", "this run has no load 'x'"
    )
    at_500 = claim("figure", "latency_mean_ms", server="a", theirs=100.0, level=500)
    assert whole(at_500, run(values, "latency_mean_ms")) == Verdict(
        at_500,
        NOT_COMPARABLE,
        "100 ms",
        "—",
        "the seed's level is 500 connections; this run measured 100, 1000, 10000",
    )
    # a server of the claim not measured, with the reason stored for it
    absent = RunView({"l": {"a": []}}, {}, {"z": "unavailable: no binary"}, {"l": C})
    z = claim("figure", server="z", theirs=1.0)
    assert whole(z, absent) == Verdict(
        z, NOT_COMPARABLE, "1.00 req/s", "—", "not measured: z: unavailable: no binary"
    )
    # the held verdict rests on the cells its rule read
    assert whole(fig, run(values, "latency_mean_ms")).rests_on == (("a", 1000),)


def test_a_changed_setting_shows_our_figure_beside_theirs_never_judged():
    values = {"a": [100, 100, 100]}

    def whole(c, r) -> Verdict:
        return judge(c, SEED, r)

    # our figure shown beside theirs, resting on the cells its rule read
    cpus = claim("figure", "latency_mean_ms", server="a", theirs=100.0, depends=["cpus"])
    assert whole(cpus, run(values, "latency_mean_ms", server_cpus=1)) == Verdict(
        cpus,
        NOT_COMPARABLE,
        "100 ms",
        f"100 ms at 100 {C}, 100 ms at 1000 {C}, 100 ms at 10000 {C}",
        "the run changed the seed's setting: the servers had 1 CPU(s) here, 2 in the seed",
        rests_on=(("a", 100), ("a", 1000), ("a", 10000)),
    )
    both = claim(
        "figure", "latency_mean_ms", server="a", theirs=100.0, depends=["cpus", "duration"]
    )
    changed = whole(both, run(values, "latency_mean_ms", server_cpus=1, durations={"l": 5.0}))
    assert changed.sentence == (
        "the run changed the seed's setting: the servers had 1 CPU(s) here, 2 in the seed; "
        "5 s per repeat here, 30 s in the seed"
    )
    # and with nothing of ours to show: both reasons
    empty = whole(cpus, run({"a": [None, None, None]}, "latency_mean_ms", server_cpus=1))
    assert empty == Verdict(
        cpus,
        NOT_COMPARABLE,
        "100 ms",
        "—",
        "the run changed the seed's setting: the servers had 1 CPU(s) here, 2 in the seed; and "
        "no trusted cell: a at 100: invalid (x); a at 1000: invalid (x); a at 10000: invalid (x)",
    )
