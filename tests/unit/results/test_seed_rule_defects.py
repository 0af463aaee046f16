"""The rule defects of issue 56, each on the synthetic run that showed it: a rank claim with a
server of its set not measured, CPU ranked backwards, a dead cell dropped from error figures, an
order the seed calls rough flipped by noise, errors summed over repeats where the seed counted one
test, "more than" read as "at least"."""

from __future__ import annotations

from typing import Any

from wsgibench.results.seed_claims import Cite, Claim, SeedClaims
from wsgibench.results.seed_rules import judge
from wsgibench.results.seed_verdicts import CHANGED, HELD, NOT_COMPARABLE, Point, RunView

SEED = SeedClaims("s", "004", "f.txt", "t", "wrk", {"server_cpus": 2, "duration_s": 30.0}, ())
SIX = ["bjoern", "cheroot", "gunicorn-sync", "meinheld-site-example", "mod-wsgi", "uwsgi-http"]


def claim(kind: str, metric: str = "rps_ok", **params: Any) -> Claim:
    return Claim("x", kind, "what", metric, (Cite(1, "text"),), params)


def view(points: dict[str, list[Point]]) -> RunView:
    return RunView({"l": points}, {"server_cpus": 2, "durations": {"l": 30.0}}, {}, {"l": "conns"})


def at(level: float, metric: str, *repeats: float) -> Point:
    """A trusted point: the median of its repeats, and the repeats themselves (each its own
    server start: the unit a difference is tested on)."""
    ordered = sorted(repeats)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return Point(level, {metric: median}, samples={metric: tuple((r,) for r in repeats)})


def test_a_rank_claim_with_servers_of_its_set_not_measured_is_not_comparable():
    """bjoern-winner "held among 1 servers" when only bjoern was measured."""
    c = claim("winner", servers=["bjoern"], among=SIX)
    v = judge(c, SEED, view({"bjoern": [at(100, "rps_ok", 9000)]}))
    assert v.verdict == NOT_COMPARABLE
    assert "cheroot" in v.sentence and "uwsgi-http" in v.sentence
    assert "among 1 servers" not in v.sentence
    # uwsgi-slowest held among 2: uwsgi-http behind bjoern, the four others not run
    last = claim("last", servers=["uwsgi-http"], among=SIX)
    two = view({"bjoern": [at(100, "rps_ok", 9000)], "uwsgi-http": [at(100, "rps_ok", 100)]})
    assert judge(last, SEED, two).verdict == NOT_COMPARABLE


def test_cpu_is_ranked_lower_is_better():
    """gevent-least-cpu ("Gevent put less strain on the system") held at 95 % and failed at 20 %."""
    c = claim("winner", "cpu_pct", servers=["gevent"], among=["gevent", "tornado", "uwsgi"])

    def cpu(gevent: float) -> RunView:
        return view(
            {
                "gevent": [at(500, "cpu_pct", gevent)],
                "tornado": [at(500, "cpu_pct", 60)],
                "uwsgi": [at(500, "cpu_pct", 50)],
            }
        )

    assert judge(c, SEED, cpu(20)).verdict == HELD
    assert judge(c, SEED, cpu(95)).verdict == CHANGED


def _errors(level: float, errors: int, attempts: int) -> Point:
    return Point(
        level,
        {
            "errors:wrk": errors,
            "attempts:wrk": attempts,
            "error_rate:wrk": errors / attempts,
        },
    )


def _dead(level: float) -> Point:
    return Point(level, {}, failed="disqualified (stopped answering)")


def test_a_dead_cell_counts_every_request_as_an_error_where_that_is_well_defined():
    """cherrypy-errors-near-zero held with its 10,000-connection cell dead."""
    c = claim("at_most", "error_rate", servers=["cheroot"], bound=0.01, over="each", counting="wrk")
    r = view({"cheroot": [_errors(100, 0, 1000), _errors(1000, 1, 1000), _dead(10000)]})
    v = judge(c, SEED, r)
    assert v.verdict == CHANGED and "100.0% at 10000" in v.sentence
    assert "every request an error" in v.ours


def test_a_dead_cell_in_an_error_total_makes_the_figure_not_comparable_naming_it():
    """mod-wsgi-6pct held with its 10,000-connection cell dead: its share of the total is unknown."""
    c = claim("figure", "error_rate", server="mod-wsgi", theirs=0.06, counting="wrk")
    r = view({"mod-wsgi": [_errors(100, 6, 100), _errors(1000, 6, 100), _dead(10000)]})
    v = judge(c, SEED, r)
    assert v.verdict == NOT_COMPARABLE and "mod-wsgi at 10000" in v.sentence


def test_an_order_the_seed_calls_rough_holds_within_the_noise():
    """ "a slight edge": CherryPy 100 against Tornado 101, repeats overlapping, is no reversal."""
    c = claim("order", servers=["cheroot", "tornado"], rough=True)
    close = view(
        {
            "cheroot": [at(1000, "rps_ok", 100, 104, 98, 102, 99)],
            "tornado": [at(1000, "rps_ok", 101, 103, 99, 97, 105)],
        }
    )
    v = judge(c, SEED, close)
    assert v.verdict == HELD and "within the noise" in v.sentence
    apart = view(
        {
            "cheroot": [at(1000, "rps_ok", 100, 101, 99, 100, 102)],
            "tornado": [at(1000, "rps_ok", 120, 121, 119, 122, 118)],
        }
    )
    w = judge(c, SEED, apart)
    assert w.verdict == CHANGED and "beyond the noise" in w.sentence
    # the same swap on a strict order is a change
    strict = claim("order", servers=["cheroot", "tornado"])
    assert judge(strict, SEED, close).verdict == CHANGED


def test_more_than_is_strictly_more():
    """ "más de 10,000 errores": 10,000 errors in the test is not more than 10,000."""
    c = claim(
        "at_least",
        "errors",
        servers=["meinheld"],
        bound=10000,
        strict=True,
        level=10000,
        counting="wrk",
    )
    assert judge(c, SEED, view({"meinheld": [_errors(10000, 10000, 20000)]})).verdict == CHANGED
    assert judge(c, SEED, view({"meinheld": [_errors(10000, 10001, 20000)]})).verdict == HELD


def test_a_total_over_the_levels_is_compared_over_the_same_levels():
    """A server's untrusted cell leaves that level out of every server's total, not of its own
    alone: else a's errors at 1,000 count against it and b's, unmeasured there, do not."""
    c = claim("winner", "error_rate", servers=["a"], among=["a", "b"], counting="wrk")
    invalid = Point(1000, {}, untrusted="invalid (engine saturated)")
    r = view(
        {"a": [_errors(100, 0, 100), _errors(1000, 50, 100)], "b": [_errors(100, 1, 100), invalid]}
    )
    v = judge(c, SEED, r)
    assert (
        v.verdict == HELD and "a at 1000: another server compared has no trusted cell" in v.sentence
    )
