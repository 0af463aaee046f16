"""A [[load]] of model "replay": its log's kinds become the load's request kinds (each its example
target, its logged status or the study's, its body and Content-Type), each speed a trace plan of
the log's schedule, a budget a search of the speed; every key wrong in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from wsgibench.errors import UsageError
from wsgibench.study.model import parse_study
from wsgibench.study.plan import every_plan
from wsgibench.traffic.schedule import decode

LOG = "".join(
    f'1.2.3.4 - - [14/Mar/2025:09:00:0{s} +0000] "{r} HTTP/1.1" {st} 5 "-" "-"\n'
    for s, r, st in [
        (0, "GET /items/1", 200),
        (0, "GET /items/2", 200),
        (1, "POST /orders", 201),
        (1, "GET /items/3", 404),
        (2, "GET /items/4", 200),
    ]
)


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("WSGIBENCH_HOME", str(tmp_path / "home"))
    (tmp_path / "access.log").write_text(LOG)
    (tmp_path / "order.json").write_text('{"lines": []}')
    return tmp_path


def _study(folder: Path, **load):
    raw = {
        "servers": ["waitress"],
        "load": [{"name": "replay", "model": "replay", "log": "access.log", **load}],
    }
    return parse_study(raw, "t.toml", folder)


def test_the_logs_kinds_are_the_loads_request_kinds(folder):
    study = _study(
        folder,
        bodies={"POST /orders": "order.json"},
        expect_status={"POST /orders": 200},
        speed=[2, 0.5],
    )
    (load,) = study.loads
    assert (load.model, load.levels, load.capacity) == ("trace", (0.5, 2.0), None)
    kinds = {k.name: k for k in study.requests_of(load)}
    assert list(kinds) == ["GET /items/{id}", "POST /orders"]
    items, orders = kinds["GET /items/{id}"], kinds["POST /orders"]
    assert (items.path, items.expect, items.weight, items.body) == (
        "/items/1",
        {"status": 200},
        4.0,
        "",
    )
    assert (orders.method, orders.body, orders.expect) == ("POST", '{"lines": []}', {"status": 200})
    assert orders.headers == {"Content-Type": "application/json"}


def test_each_speed_is_a_trace_plan_of_the_logs_schedule(folder):
    study = _study(folder, bodies={"POST /orders": "order.json"}, speed=[2])
    (what, plan), (_, warm) = every_plan(study)
    assert what == "[[load]] 'replay' at speed 2"
    m = plan.model
    assert (m.kind, m.level, m.schedule_requests, m.span_s, m.duration_s) == (
        "trace",
        2,
        5,
        3,
        None,
    )
    assert [r.name for r in plan.requests] == ["GET /items/{id}", "POST /orders"]
    records = decode(Path(m.schedule).read_bytes())
    assert records == [(250_000, 0), (750_000, 0), (1_250_000, 1), (1_750_000, 0), (2_500_000, 0)]
    # warm-up: 1 s of the log's mix (weights its counts) at its mean rate at the speed
    assert (warm.model.kind, warm.model.level, warm.model.duration_s) == ("rate", 10 / 3, 1.0)
    assert [r.weight for r in warm.requests] == [4.0, 1.0]


def test_a_post_without_a_body_is_left_out(folder):
    study = _study(folder)
    assert [k.name for k in study.requests_of(study.loads[0])] == ["GET /items/{id}"]
    (load,) = study.loads
    assert load.replay is not None
    assert [x.what for x in load.replay.traffic().left_out] == ["POST /orders"]


def test_a_budget_searches_the_speed(folder):
    study = _study(folder, slo_p99_ms=20, speed=3, max_speed=50, slo_per_kind=True)
    (load,) = study.loads
    spec = load.capacity
    assert (spec.slo_p99_ms, spec.start_rate, spec.max_rate, spec.min_rate) == (20, 3, 50, 0.01)
    assert spec.per_kind and load.levels == ()


@pytest.mark.parametrize(
    ("load", "said"),
    [
        ({"levels": [1]}, "takes speed, not levels"),
        ({"slo_p99_ms": 10, "speed": [1, 2]}, "from one speed, not a list"),
        ({"max_speed": 10}, "max_speed is for a replay with slo_p99_ms"),
        ({"log": "absent.log"}, "no such file"),
        ({"bodies": {"GET /items/{id}": "order.json"}}, "not a POST, PUT or PATCH kind"),
        ({"bodies": {"POST /orders": "absent.json"}}, "cannot be read"),
        ({"group": ["items/{id}"]}, "path pattern"),
        ({"format": "tsv"}, "log format"),
        ({"json_fields": {"time": "t"}, "format": "combined"}, "json_fields are for"),
        ({"protocol": "websocket"}, "not protocol"),
        ({"duration_s": 3}, "duration_s is not a key of model replay"),
        ({"speed": 0}, "speed must be"),
    ],
)
def test_a_wrong_key_is_one_line(folder, load, said):
    with pytest.raises(UsageError, match=said):
        _study(folder, **load)


def test_a_kind_the_study_names_that_the_log_lacks_is_named_with_the_nearest(folder):
    study = _study(folder, expect_status={"GET /item/{id}": 200})
    with pytest.raises(UsageError, match=r"'GET /item/\{id\}' is no kind of the log.*GET /items"):
        study.requests_of(study.loads[0])


def test_a_log_of_which_nothing_is_replayed_says_why(folder):
    (folder / "access.log").write_text(
        '1.2.3.4 - - [14/Mar/2025:09:00:00 +0000] "POST /x HTTP/1.1" 200 5 "-" "-"\n'
    )
    study = _study(folder)
    with pytest.raises(UsageError, match="nothing left to replay .*POST /x: a POST needs its body"):
        study.requests_of(study.loads[0])


def test_keep_alive_is_wanted_only_on_a_pool(folder):
    assert not _study(folder).loads[0].wants_keep_alive  # a connection of its own for each
    assert _study(folder, pool=4).loads[0].wants_keep_alive
