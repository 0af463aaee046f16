"""One's own app slow to import gets the time its import took on top of the server's start
timeout, for every process that imports it on each CPU; a built-in app gets none. A server that
runs no ASGI lifespan is named when one's own app's start-up ran in the check."""

from __future__ import annotations

from dataclasses import replace

from wsgibench.run.serve import ServeOptions, start_allowance
from wsgibench.study.apps import APPS


def test_twice_the_import_per_process_on_each_cpu():
    mine = replace(APPS["pong"], spec="ml.py:app", startup_s=12.0)
    assert start_allowance(ServeOptions(app=mine, workers=1, cpus=[0])) == 24.0
    assert start_allowance(ServeOptions(app=mine, workers=4, cpus=[0])) == 96.0
    assert start_allowance(ServeOptions(app=mine, workers=4, cpus=[0, 1])) == 48.0
    assert start_allowance(ServeOptions(app=mine, workers=3, cpus=[0, 1])) == 48.0
    assert start_allowance(ServeOptions(app=mine, workers=2, cpus=None)) == 48.0
    assert start_allowance(ServeOptions(app=APPS["pong"], workers=8, cpus=[0])) == 0.0


def test_a_server_that_runs_no_lifespan_is_named_for_an_app_whose_start_up_ran():
    from wsgibench.run.serve import lifespan_unrun
    from wsgibench.servers import get

    mine = replace(APPS["pong"], spec="api.py:app", lifespan=True)
    said = lifespan_unrun(get("daphne"), mine)
    assert said.startswith(" (daphne runs no ASGI lifespan: app api.py:app's lifespan start-up")
    assert lifespan_unrun(get("uvicorn"), mine) == ""  # it runs it
    assert lifespan_unrun(get("waitress"), mine) == ""  # a WSGI server: no such thing
    assert lifespan_unrun(get("daphne"), replace(mine, lifespan=False)) == ""
