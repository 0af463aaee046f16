"""Latency over every request kind (results/latency.py), on engine results whose HdrHistograms the
test recorded itself: kinds added exactly, never averaged; a kind with no request left out; the
replies apart; which percentiles fall on failures (lower bounds); and each kind's own figures."""

from __future__ import annotations

from hdrh.histogram import HdrHistogram

from wsgibench.results import latency
from wsgibench.results.engine_result import EngineResult

from ..run.fakes import recorded, result


def _result(*kinds: dict, failed: int = 0, fail_us: int = 1, **totals: object) -> EngineResult:
    """An engine result of these kinds; the first has `failed` timeouts recorded at `fail_us`."""
    errors = {"timeout": failed} if failed else None
    return result(kinds=list(kinds), errors=errors, fail_us=fail_us, totals=dict(totals) or None)


def _kinds(**ok_at: tuple[int, int]) -> list[dict]:
    """One kind per name: `ok` replies, all at `us` microseconds."""
    return [recorded(name, ok, us) for name, (ok, us) in ok_at.items()]


def test_one_kind_is_its_own_latency_and_several_are_added_exactly():
    (one,) = _kinds(pong=(90, 1_000))
    alone = _result(one)
    assert latency.overall(alone) == alone.kinds[0].latency
    fast, slow = _kinds(fast=(90, 1_000), slow=(10, 50_000))
    both = _result(fast, slow)
    whole = latency.overall(both)
    assert whole is not None and whole.count == 100
    # 90 % of the requests at 1 ms, 10 % at 50 ms: the p90 is the fast one's, the p99 the slow
    # one's (an average of the kinds' percentiles would be neither)
    assert whole.p50 == whole.p90 == 1_000 and 50_000 <= whole.p99 <= 50_050
    assert whole.max >= 50_000 and whole.mean == 0.9 * 1_000 + 0.1 * 50_000
    added = latency.added(both)
    assert added is not None and added.get_total_count() == 100
    assert added.get_count_at_value(1_000) == 90 and added.get_count_at_value(50_000) == 10


def test_a_kind_without_requests_is_left_out_and_none_at_all_is_the_first_kinds():
    fast, idle = _kinds(fast=(50, 2_000), idle=(0, 1))
    res = _result(fast, idle)
    assert latency.overall(res) == res.kinds[0].latency
    (nothing,) = _kinds(idle=(0, 1))
    empty = _result(nothing)
    assert latency.overall(empty) == empty.kinds[0].latency  # the first kind's, empty
    assert latency.added(empty) is None
    no_kinds = result(kinds=[])
    no_kinds = EngineResult.from_dict({**no_kinds.raw, "kinds": []})
    assert latency.overall(no_kinds) is None and latency.added(no_kinds) is None


def test_a_kind_with_values_but_no_encoded_histogram_adds_to_nothing():
    a, b = _kinds(a=(10, 1_000), b=(10, 2_000))
    b["latency_us"] = {**b["latency_us"], "hdr": ""}
    res = _result(a, b)
    assert latency.added(res) is None and latency.overall(res) is None


def test_replies_apart_from_failures_and_the_percentiles_that_fall_on_failures():
    res = _result(*_kinds(pong=(90, 1_000)), failed=10, fail_us=2_000_000)  # timed out at 2 s
    whole, replies = latency.overall(res), latency.replies(res)
    assert whole is not None and replies is not None
    assert (whole.count, replies.count) == (100, 90)
    assert replies.max == 1_000 and whole.max >= 2_000_000
    failures = latency.added_failures(res)
    assert failures is not None and failures.get_total_count() == 10
    # p50 and p90 are replies' (1 ms); p99 and the max fall where the failures are: only known
    # to be at least that
    assert latency.bounds(res).as_list() == ["max", "p99"]
    assert "p99" in latency.bounds(res) and "p50" not in latency.bounds(res)
    assert latency.on_failures(failures, whole.p99) and not latency.on_failures(failures, 1_000)
    assert not latency.on_failures(failures, 0) and not latency.on_failures(None, whole.p99)


def test_no_failure_no_bounds():
    res = _result(*_kinds(pong=(90, 1_000)))
    assert latency.bounds(res).as_list() == [] and latency.added_failures(res) is None
    empty = HdrHistogram(1, 3_600_000_000, 3)
    assert latency._bounds_of(latency.overall(res), empty) == latency.Bounds()


def test_each_kinds_own_figures():
    slow, fast = _kinds(slow=(20, 50_000), fast=(80, 1_000))
    slow["errors"] = {**slow["errors"], "timeout": 5}
    slow["ok_in_window"] = 20
    fast["ok_in_window"] = 60  # of its 80 replies, 60 in the measured window
    res = _result(slow, fast, failed=5, fail_us=3_000_000, window_s=2.0)
    kinds = latency.by_kind(res)
    assert set(kinds) == {"fast", "slow"}
    f, s = kinds["fast"], kinds["slow"]
    assert (f["ok"], f["requests_sent"], f["errors"]) == (80, 80, {})
    assert f["rps_ok"] == 30.0  # 60 in the window's 2 s, not 80 over the run
    assert s["rps_ok"] == 10.0 and s["errors"] == {"timeout": 5}
    assert (f["p50_us"], f["p99_us"], f["max_us"], f["bounds"]) == (1_000, 1_000, 1_000, [])
    assert f["mean_us"] == 1_000.0 and f["p90_us"] == 1_000
    # 5 of its 25 requests failed at 3 s: its p90, p99 and max are at least that
    assert s["bounds"] == ["max", "p90", "p99"] and s["max_us"] >= 3_000_000
    assert (s["reply_p50_us"], s["reply_p99_us"]) == (50_000, 50_000)
    # without a window (a format-1 result): valid replies over the run's elapsed seconds
    older = _result(*_kinds(pong=(50, 1_000)))
    assert latency.by_kind(older)["pong"]["rps_ok"] == 50 / older.elapsed_s


def test_one_failure_in_the_bucket_of_a_percentile_makes_it_a_bound_even_at_1_us():
    one = HdrHistogram(1, 3_600_000_000, 3)
    one.record_value(1)  # a single failure, at 1 µs (refused at once)
    assert latency.on_failures(one, 1) and not latency.on_failures(one, 2)


def test_a_kinds_rate_over_the_run_without_a_window():
    (kind,) = _kinds(pong=(50, 1_000))
    res = _result(kind)
    two_s = EngineResult.from_dict({**res.raw, "elapsed_s": 2.0, "totals": res.raw["totals"]})
    assert latency.by_kind(two_s)["pong"]["rps_ok"] == 25.0  # 50 valid replies over 2 s
    none = EngineResult.from_dict({**res.raw, "elapsed_s": 0.0})
    assert latency.by_kind(none)["pong"]["rps_ok"] == 50.0  # no run time said: per second of 1


def test_a_kind_without_its_histograms_says_none_and_no_bounds():
    (kind,) = _kinds(pong=(0, 1))
    bare = {k: v for k, v in kind.items() if k != "latency_us"}  # a format-1 kind, no latency
    res = _result(kind)
    old = EngineResult.from_dict({**res.raw, "kinds": [bare]})
    figures = latency.by_kind(old)["pong"]
    assert [figures[f] for f in ("mean_us", "p50_us", "p90_us", "p99_us", "max_us")] == [None] * 5
    assert (figures["reply_p50_us"], figures["reply_p99_us"], figures["bounds"]) == (None, None, [])
