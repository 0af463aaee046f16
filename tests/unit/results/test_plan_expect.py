"""A request kind's `expect`: the checks that combine with the body check (`body_contains`, `json`,
`content_type`) are written as the engine reads them, read back to the same frozen `Expect`, and a
stored one of the wrong shape is refused naming the field."""

from __future__ import annotations

import json

import pytest

from wsgibench.results.engine_plan import EnginePlan, MalformedPlan
from wsgibench.results.plan_expect import Expect

WORLD = Expect(
    status=200,
    body_len=27,
    body_contains="Hello",
    json=(("message", "Hello, World!"), ("rows.19.id", 1020), ("rows.0.n", 1.5), ("ok", True)),
    content_type="application/json",
)


def test_the_new_checks_are_written_as_the_engine_reads_them():
    assert WORLD.to_dict() == {
        "status": 200,
        "body_len": 27,
        "body_contains": "Hello",
        "json": {"message": "Hello, World!", "rows.19.id": 1020, "rows.0.n": 1.5, "ok": True},
        "content_type": "application/json",
    }
    assert Expect(status=204).to_dict() == {"status": 204}


@pytest.mark.parametrize(
    "expect",
    [
        WORLD,
        Expect(status=200, body="Pong!", content_type="text/plain"),
        Expect(status=200, body_float=(30.0, None), json=(("a.0", "x"),)),
        Expect(status=200, body_contains=""),
    ],
)
def test_an_expect_reads_back_to_the_same_and_stays_frozen(expect: Expect):
    doc = expect.to_dict()
    again = Expect.from_dict(json.loads(json.dumps(doc)))
    assert again == expect and again.to_dict() == doc
    assert list(again.to_dict().get("json", {})) == list(doc.get("json", {}))  # the order kept
    assert hash(again) == hash(expect)
    with pytest.raises(AttributeError):
        again.json = ()  # type: ignore[misc]


def test_a_plan_with_the_new_checks_reads_back_exactly():
    doc = {
        "target": {"host": "127.0.0.1", "port": 80},
        "model": {"kind": "count", "concurrency": 2, "requests": 4},
        "requests": [{"name": "world", "path": "/json", "expect": WORLD.to_dict()}],
    }
    plan = EnginePlan.from_dict(doc)
    assert plan.requests[0].expect == WORLD
    assert EnginePlan.from_dict(plan.to_dict()) == plan


@pytest.mark.parametrize(
    "expect, needle",
    [
        ({"status": 200, "body_contains": 1}, "body_contains is 1, not a string"),
        ({"status": 200, "content_type": ["a/b"]}, "content_type"),
        ({"status": 200, "json": "message"}, "json is 'message', not a JSON object"),
        ({"status": 200, "json": {}}, "not a non-empty JSON object"),
        ({"status": 200, "json": {"rows": [1]}}, "json.rows is [1], not a string, number"),
        ({"status": 200, "json": {"rows": {"0": 1}}}, "json.rows"),
    ],
)
def test_a_stored_expect_of_the_wrong_shape_is_refused(expect: dict, needle: str):
    doc = {
        "target": {"host": "127.0.0.1", "port": 80},
        "model": {"kind": "count", "concurrency": 2, "requests": 4},
        "requests": [{"name": "r", "expect": expect}],
    }
    with pytest.raises(MalformedPlan, match="engine plan") as exc:
        EnginePlan.from_dict(doc)
    assert needle in str(exc.value)
