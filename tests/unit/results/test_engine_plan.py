"""The typed engine plan: the JSON it writes is the JSON plans had before it (the fixture, recorded
by the old code), a stored plan reads back to the same plan, it is built with keyword arguments
only, and it says its time bound, the requests it sends and its pipelining depth."""

from __future__ import annotations

import dataclasses
import json

import pytest

from wsgibench.results.engine_plan import (
    LEVEL_FIELDS,
    MODELS,
    EnginePlan,
    HttpSettings,
    LoadModel,
    MalformedPlan,
    Target,
)
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.result_fields import MalformedResult
from wsgibench.study.load_keys import LOAD_KEYS
from wsgibench.study.model import load_study

from .plan_cases import FIXTURE, cases

EXPECTED = json.loads(FIXTURE.read_text())


def _sorted(doc: dict) -> str:
    return json.dumps(doc, sort_keys=True)


def test_every_plan_and_its_split_is_the_json_of_before():
    built = {}
    for key, load, kwargs in cases():
        plan = load.plan(**kwargs)
        built[key] = {
            "plan": _sorted(plan.to_dict()),
            "split3": [_sorted(part.to_dict()) for part in plan.split(3)],
        }
        assert json.loads(plan.to_json()) == plan.to_dict()
    # every plan recorded then is built the same now (studies added since have no "before")
    assert set(EXPECTED) <= set(built)
    for key, want in EXPECTED.items():
        assert built[key] == want, key


def test_a_stored_plan_reads_back_to_the_same_plan():
    for key, load, kwargs in cases():
        plan = load.plan(**kwargs)
        for one in (plan, *plan.split(3)):
            assert EnginePlan.from_dict(one.to_dict()) == one, key
            assert EnginePlan.from_dict(json.loads(one.to_json())).to_dict() == one.to_dict()
        if key in EXPECTED:
            stored = json.loads(EXPECTED[key]["plan"])
            assert EnginePlan.from_dict(stored).to_dict() == stored


def _plan(model: LoadModel, timeout_s: float = 5.0) -> EnginePlan:
    return EnginePlan(
        target=Target(host="127.0.0.1", port=8080),
        model=model,
        http=HttpSettings(),
        requests=(),
        timeout_s=timeout_s,
        connect_timeout_s=timeout_s,
    )


def test_a_plan_and_a_load_level_are_built_with_keywords_only():
    with pytest.raises(TypeError):
        EnginePlan(Target(host="127.0.0.1", port=1), LoadModel(kind="count", level=1, requests=1))
    with pytest.raises(TypeError):
        LoadModel("closed", 1)
    study = load_study("quick")
    with pytest.raises(TypeError):
        study.loads[0].plan(10, 8080, list(study.requests), None, 1)
    plan = _plan(LoadModel(kind="closed", level=2, duration_s=1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.seed = 3


def test_the_bound_on_a_run():
    closed = LoadModel(kind="closed", level=10, duration_s=10)
    assert _plan(closed).bound_s == 10 + 2 * 5 + 30
    users = LoadModel(kind="sessions", level=3, duration_s=10, requests=4, think_s=0.5)
    assert _plan(users, timeout_s=2).bound_s == 10 + 4 * (0.5 + 2) + 2 * 2 + 30
    count = LoadModel(kind="count", level=4, requests=100)
    assert _plan(count).bound_s == 600 + 2 * 5 + 30
    conns = LoadModel(kind="rate", level=100, connections_total=1000)
    assert _plan(conns).bound_s == 600 + 2 * 5 + 30
    long = LoadModel(kind="rate", level=100, duration_s=900, connections_total=1000)
    assert _plan(long).bound_s == 900 + 2 * 5 + 30


def test_the_requests_a_plan_sends_when_its_model_fixes_them():
    def expected(**model):
        return _plan(LoadModel(**model)).expected_requests

    assert expected(kind="sessions", level=3, duration_s=10, requests=4, think_s=0.5) == 120
    assert expected(kind="count", level=4, requests=10) == 10
    assert expected(kind="rate", level=100, connections_total=1000, calls=5) == 5000
    assert expected(kind="conn_rate", level=100, connections_total=1000) == 1000
    assert expected(kind="rate", level=100, duration_s=10, calls=5) is None
    assert expected(kind="closed", level=10, duration_s=10) is None


def test_the_pipelining_depth():
    def depth(**fields):
        return _plan(LoadModel(**fields)).depth

    assert depth(kind="closed", level=10, duration_s=1) == 1
    assert depth(kind="closed", level=10, duration_s=1, pipeline=4) == 4
    assert depth(kind="rate", level=10, duration_s=1, pipeline=True) == 2
    assert depth(kind="rate", level=10, duration_s=1, pipeline=False) == 1


def test_a_warm_up_is_short():
    count = LoadModel(kind="count", level=3, requests=1000).shortened(0.5)
    assert count.requests == 6
    users = LoadModel(kind="sessions", level=3, duration_s=60, requests=9, think_s=1)
    assert users.shortened(0.5) == dataclasses.replace(users, duration_s=0.5, requests=2, think_s=0)
    conns = LoadModel(kind="rate", level=5, connections_total=100, calls=2).shortened(1.0)
    assert (conns.connections_total, conns.duration_s, conns.calls) == (None, 1.0, 2)


def test_the_models_agree_with_the_study_keys():
    for model, fields in MODELS.items():
        if model == "trace":  # a replay's: its log gives the schedule's fields (study/replay.py)
            replay = {k.name for k in LOAD_KEYS if "replay" in k.models}
            assert replay & fields.allowed == {"pool"}
            assert not fields.required & replay
            continue
        takes = {k.name for k in LOAD_KEYS if k.models and model in k.models}
        needs = {k.name for k in LOAD_KEYS if model in k.required} - {"model", "levels"}
        assert (takes, needs) == (fields.allowed, fields.required), model
        assert LEVEL_FIELDS[model] == fields.level


def _doc(**changes) -> dict:
    model = {"kind": "count", "concurrency": 2, "requests": 4}
    doc = {"target": {"host": "127.0.0.1", "port": 80}, "model": model}
    return {**doc, **changes}


@pytest.mark.parametrize(
    "doc",
    [
        _doc(model={"kind": "telepathy", "level": 1}),
        _doc(model={"kind": "count", "concurrency": 2, "requests": 4, "duration_s": 1}),
        _doc(model={"kind": "sessions", "users_per_s": 2, "duration_s": 1}),
        _doc(model={"kind": "closed", "duration_s": 1}),
        _doc(model={"kind": "count", "concurrency": "2", "requests": 4}),
        _doc(protocol_version=2),
        _doc(linger=True),
        _doc(target={"host": "127.0.0.1"}),
        _doc(threads=True),
        _doc(cpus=[0, "1"]),
        _doc(requests=[{"name": "pong", "expect": {"status": 200, "colour": "red"}}]),
        [],
    ],
)
def test_a_malformed_plan_says_what_is_wrong(doc):
    with pytest.raises(MalformedPlan):
        EnginePlan.from_dict(doc)


def test_a_result_whose_plan_is_malformed_is_malformed():
    doc = {"format_version": 1, "plan": {"model": {"kind": "closed"}}, "elapsed_s": 1.0}
    with pytest.raises(MalformedResult, match="engine plan"):
        EngineResult.from_dict({**doc, "totals": {"requests_sent": 0, "ok": 0}, "cost": {}})


def test_fields_the_engine_has_defaults_for_may_be_absent():
    plan = EnginePlan.from_dict(_doc(http={"version": "1.0"}))
    assert (plan.http.keep_alive, plan.timeout_s, plan.connect_timeout_s) == (False, 5.0, 5.0)
    assert (plan.threads, plan.cpus, plan.seed, plan.requests, plan.phase_s) == (1, (), 1, (), None)
    assert not plan.target.remote and "allow_remote" not in plan.to_dict()
    far = EnginePlan.from_dict(_doc(target={"host": "10.1.2.3", "port": 80}, allow_remote=True))
    assert far.target.remote and far.to_dict()["allow_remote"] is True
