"""A study's [[requests]] `expect` with the checks that combine with the body check
(`body_contains`, `json`, `content_type`): written in TOML as docs/studies.md says, they reach the
engine plan unchanged; a value of the wrong type is one line naming the file and the key."""

from __future__ import annotations

import tomllib

import pytest

from wsgibench.errors import EXIT_USAGE, UsageError
from wsgibench.results.plan_expect import Expect
from wsgibench.study.model import parse_study

STUDY = """
servers = ["wsgiref"]

[[load]]
model = "count"
levels = [2]
requests = 10

[[requests]]
name = "world"
path = "/json"
expect = { status = 200, body_contains = "World", content_type = "application/json", \
json = { "message" = "Hello, World!", "rows.19.id" = 1020, "rows.0.n" = 1.5, "ok" = true } }
"""


def _expect(text: str) -> str:
    return STUDY.replace(STUDY.split("expect = ", 1)[1], text + "\n")


def test_the_new_keys_reach_the_engine_plan():
    study = parse_study(tomllib.loads(STUDY), "mine.toml")
    load = study.loads[0]
    plan = load.plan(level=2, port=8080, requests=list(study.requests), cpus=None, seed=1)
    expect = plan.requests[0].expect
    assert expect == Expect(
        status=200,
        body_contains="World",
        content_type="application/json",
        json=(("message", "Hello, World!"), ("rows.19.id", 1020), ("rows.0.n", 1.5), ("ok", True)),
    )
    assert plan.to_dict()["requests"][0]["expect"]["json"] == {
        "message": "Hello, World!",
        "rows.19.id": 1020,
        "rows.0.n": 1.5,
        "ok": True,
    }


@pytest.mark.parametrize(
    "expect, needles",
    [
        ("{ status = 200, body_contains = 5 }", ["expect.body_contains", "5 (a number)"]),
        ('{ status = 200, content_type = ["a/b"] }', ["expect.content_type", "a media type"]),
        ('{ status = 200, json = "message" }', ["expect.json", '"dotted.paths"', "(a string)"]),
        ("{ status = 200, json = {} }", ["expect.json", "not an empty table"]),
        ("{ status = 200, json = { a = [1] } }", ['expect.json entry "a"', "a list"]),
        ('{ status = 200, json = { "a..b" = 1 } }', ['path "a..b" has an empty segment']),
        ("{ status = 200, json = { a = nan } }", ['entry "a"', "string, number or boolean"]),
        # TOML reads a bare dotted key as nested tables: the path to quote is named
        ("{ status = 200, json = { rows.19.id = 1020 } }", ['quote a dotted path ("rows.19.id")']),
        ("{ status = 200, jsn = {} }", ['unknown key expect.jsn (did you mean "json"?)']),
    ],
)
def test_a_wrong_type_is_one_line_naming_the_key(expect: str, needles: list[str]):
    with pytest.raises(UsageError) as exc:
        parse_study(tomllib.loads(_expect(expect)), "mine.toml")
    text = str(exc.value)
    assert exc.value.exit_code == EXIT_USAGE and "\n" not in text
    assert text.startswith("mine.toml [[requests]] #1: "), text
    for needle in needles:
        assert needle in text, (needle, text)
