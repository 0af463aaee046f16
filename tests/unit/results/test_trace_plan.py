"""The trace model's plan: its fields written and read back, split among load hosts (each every
n-th request, a pool divided), its warm-up the log's first seconds, its bound and its requests."""

from __future__ import annotations

import pytest

from wsgibench.results.engine_plan import EnginePlan, HttpSettings, LoadModel, MalformedPlan, Target
from wsgibench.results.plan_expect import Expect
from wsgibench.results.plan_request import PlanRequest


def _plan(**model) -> EnginePlan:
    fields = {"schedule": "/tmp/x.trace", "schedule_requests": 10, "span_s": 20.0, **model}
    return EnginePlan(
        target=Target(host="127.0.0.1", port=8080),
        model=LoadModel(kind="trace", level=2.0, **fields),
        http=HttpSettings(),
        requests=(PlanRequest(name="GET /", expect=Expect.from_dict({"status": 200})),),
        timeout_s=5.0,
        connect_timeout_s=5.0,
    )


def test_the_plan_says_its_speed_schedule_and_span_and_reads_back():
    plan = _plan(pool=4)
    doc = plan.to_dict()
    assert doc["model"] == {
        "kind": "trace",
        "pool": 4,
        "schedule": "/tmp/x.trace",
        "schedule_requests": 10,
        "span_s": 20.0,
        "speed": 2.0,
    }
    assert EnginePlan.from_dict(doc) == plan
    with pytest.raises(MalformedPlan, match="needs schedule"):
        LoadModel(kind="trace", level=1.0, span_s=1.0, schedule_requests=1)
    with pytest.raises(MalformedPlan, match="takes no calls"):
        _plan(calls=2)


def test_load_hosts_take_every_nth_request_and_share_the_pool():
    parts = _plan(pool=5).split(3)
    assert [(p.model.first, p.model.stride, p.model.pool) for p in parts] == [
        (0, 3, 2),
        (1, 3, 2),
        (2, 3, 1),
    ]
    assert {p.model.schedule_requests for p in parts} == {10}
    assert all(p.phase_s is None for p in parts)  # the schedule interleaves them, not a phase
    assert len(_plan(schedule_requests=2).split(5)) == 2  # no host without a request
    assert [p.model.first for p in _plan().split(1)] == [0]


def test_the_warm_up_sends_the_logs_mix_at_its_mean_rate_at_the_speed():
    warm = _plan().model.shortened(1.5)
    assert (warm.kind, warm.level, warm.duration_s, warm.pool) == ("rate", 1.0, 1.5, None)
    assert _plan(pool=3).model.shortened(2).pool == 3  # 10 requests over 20 s, at speed 2


def test_its_bound_and_its_requests():
    assert _plan().bound_s == pytest.approx(20.0 / 2 + 2 * 5 + 30)
    assert _plan(duration_s=4.0).bound_s == pytest.approx(4.0 / 2 + 2 * 5 + 30)
    assert _plan().expected_requests == 10
    assert _plan(duration_s=4.0).expected_requests is None
    assert _plan().split(2)[0].expected_requests is None
