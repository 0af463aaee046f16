"""A report's "As run" line names what a reader needs to run the study again: one's own app (its
spec, ASGI side and dependencies), its settings and the requests with what made a reply valid."""

from __future__ import annotations

from wsgibench.report.data import StudyMeta

LOAD = {"name": "c", "model": "closed", "levels": [4, 16], "duration_s": 2}


def _meta(**config: object) -> StudyMeta:
    return StudyMeta(
        1, "s", "finished", 0.0, {}, {"servers": ["uvicorn"], "load": [LOAD], **config}
    )


def test_pong_says_no_app():
    assert (
        _meta().as_run()
        == "As run: 1 server, 3 repeats per cell, one server start; c: closed at connections 4, 16, 2 s."
    )


def test_ones_own_app_its_settings_and_requests_are_said():
    said = _meta(
        app="fac:create_app('x')",
        app_asgi="fac:create_asgi()",
        requirements="/home/me/site/requirements.txt",
        app_env={"DJANGO_SETTINGS_MODULE": "mysite.settings"},
        requests=[
            {"name": "items", "path": "/api/items", "query": {"limit": 5}, "weight": 3,
             "expect": {"status": 200, "json": {"count": 5}}},
            {"name": "echo", "method": "POST", "path": "/echo"},
        ],
    ).as_run()  # fmt: skip
    assert said == (
        "As run: 1 server, 3 repeats per cell, one server start; app fac:create_app('x') (ASGI side"
        " fac:create_asgi()), its dependencies from requirements.txt; app settings"
        " DJANGO_SETTINGS_MODULE=mysite.settings; requests items: GET /api/items?limit=5 × 3"
        ' expecting {"status": 200, "json": {"count": 5}}, echo: POST /echo;'
        " c: closed at connections 4, 16, 2 s."
    )


def test_a_loads_own_app_is_said_with_the_load():
    said = _meta(load=[LOAD, {**LOAD, "name": "f", "app": "flask"}]).as_run()
    assert "f: closed at connections 4, 16, 2 s, app flask." in said
