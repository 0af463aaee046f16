"""Each request kind's own figures over a cell's repeats (requests, valid replies per second,
latency percentiles as the median of the repeats', errors by class), a trace's seconds, and a
capacity step judged per kind."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hdrh.histogram import HdrHistogram

from wsgibench.results.capacity import Budget, StepStatus
from wsgibench.results.capacity_kinds import kind_histograms, kind_miss
from wsgibench.results.capacity_step import judge_step
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.hdr_docs import histogram_doc
from wsgibench.results.kind_figures import kind_figures, several_kinds, trace_seconds


def _latency(values_us: list[int]) -> dict:
    h = HdrHistogram(1, 3_600_000_000, 3)
    for v in values_us:
        h.record_value(v)
    return histogram_doc(h)


def _kind(name: str, ok: int, latencies: list[int], errors: dict | None = None, codes=None):
    errors = errors or {}
    return {
        "name": name,
        "requests_sent": ok + sum(errors.values()),
        "responses": len(latencies),
        "ok": ok,
        "errors": errors,
        "bad_status_codes": codes or {},
        "latency_us": _latency(latencies),
    }


def _result(kinds: list[dict], window_s: float = 2.0, model: dict | None = None, timeline=()):
    model = model or {"kind": "closed", "connections": 2, "duration_s": window_s}
    return EngineResult.from_dict(
        {
            "format_version": 1,
            "plan": {"target": {"port": 1}, "model": model},
            "elapsed_s": window_s + 0.5,
            "totals": {"requests_sent": 0, "ok": 0, "window_s": window_s},
            "kinds": kinds,
            "timeline": list(timeline),
            "cost": {"user_s": 0, "sys_s": 0},
        }
    )


def test_each_kinds_figures_over_the_repeats():
    reps = [
        _result(
            [
                _kind("get", 100, [1000] * 100),
                _kind("post", 8, [5000] * 10, {"bad_status": 2}, {"500": 2}),
            ]
        ),
        _result([_kind("get", 120, [3000] * 120), _kind("post", 10, [7000] * 10)]),
    ]
    assert several_kinds(reps)
    get, post = kind_figures(reps)
    assert (get.name, get.sent, get.ok, get.errors) == ("get", 220, 220, 0)
    assert get.rps_ok == pytest.approx((50 + 60) / 2)  # ok over the 2 s window, median
    assert get.p50_us == pytest.approx(2000, rel=0.01)  # the median of 1 and 3 ms
    assert (post.sent, post.ok, post.errors, post.error_rate) == (20, 18, 2, pytest.approx(0.1))
    assert post.classes_text() == "bad_status 2 (500 ×2)"
    assert get.classes_text() == ""
    assert not several_kinds([_result([_kind("get", 1, [10])])])


def test_the_engines_own_ok_in_window_per_kind_is_preferred():
    kind = {**_kind("get", 100, [1000] * 100), "ok_in_window": 80}
    (get,) = kind_figures([_result([kind])])
    assert get.rps_ok == pytest.approx(40)


def test_a_trace_gives_its_seconds_due_and_their_p99():
    model = {
        "kind": "trace",
        "speed": 1,
        "schedule": "/x",
        "schedule_requests": 5,
        "span_s": 2,
    }
    timeline = [
        {"t_s": 0, "completed": 3, "ok": 3, "p50_us": 10, "p99_us": 900, "arrivals": 3},
        {"t_s": 1, "completed": 0, "ok": 0, "p50_us": 0, "p99_us": 0, "arrivals": 2},
    ]
    seconds = trace_seconds(_result([_kind("get", 5, [1])], model=model, timeline=timeline))
    assert [(s.t_s, s.arrivals, s.p99_us) for s in seconds] == [(0, 3, 900), (1, 2, None)]
    assert trace_seconds(_result([_kind("get", 5, [1])], timeline=timeline)) == []


def test_a_step_misses_per_kind_when_one_kinds_own_p99_is_over():
    fast = [1000] * 990
    reps = [
        SimpleNamespace(engine=_result([_kind("get", 990, fast), _kind("rare", 10, [80_000] * 10)]))
    ]
    assert set(kind_histograms(reps)) == {"get", "rare"}
    said = kind_miss(reps, 99.0, 50.0)
    assert said == "rare: p99 80.1 ms > 50 ms (100.0% of its 10 requests over 50 ms)"
    assert kind_miss(reps, 99.0, 100.0) == ""
    assert kind_miss(reps, 50.0, None) == ""
    # with more repeats planned than measured, the share is of them all (flawless ones to come)
    assert kind_miss(reps, 99.0, 50.0, scale=0.005) == ""


def test_a_per_kind_budget_fails_a_step_that_all_requests_together_meet():
    engine = _result([_kind("get", 990, [1000] * 990), _kind("rare", 10, [80_000] * 10)])
    rep = SimpleNamespace(
        engine=engine,
        latency_p99_us=1000.0,
        latency_p50_us=1000.0,
        error_rate=0.0,
        rps_ok=500.0,
        requests=1000,
    )
    overall = judge_step(2.0, [rep], Budget(50.0))
    assert overall.status == StepStatus.MET, overall.reason
    each = judge_step(2.0, [rep], Budget(50.0, per_kind=True))
    assert each.status == StepStatus.MISSED
    assert each.reason.startswith("rare: p99 80.1 ms > 50 ms")
    assert Budget(50.0, per_kind=True).describe() == "p99 ≤ 50 ms (each kind), errors ≤ 5.0%"
