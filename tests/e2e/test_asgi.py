"""ASGI servers end to end: each serves the pong app and is measured, its loop and parser read from
the running server; seed 001's shape in ASGI (an awaited sleep serves 40 at once, a blocking one
one at a time); and uvicorn without uvloop is seen to fall back."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from wsgibench.machine import venvs
from wsgibench.results.store import Store
from wsgibench.run.study import StudyRunner
from wsgibench.servers import get
from wsgibench.study.model import parse_study

from .helpers import expect_measured, measured_or_engine_bound, require, server_flags
from .quiet import quiet_cpus

ASGI = [
    "uvicorn",
    "uvicorn-h11",
    "hypercorn",
    "hypercorn-uvloop",
    "granian-asgi",
    "gunicorn-uvicorn",
    "daphne",
    "socketify-asgi",
    "gunicorn-asgi",
]
# Granian's own interface (RSGI) is measured and read back the same way.
ASYNC = [*ASGI, "granian-rsgi"]


def _run(tmp_path: Path, spec: dict) -> list:
    store = Store(tmp_path / f"{spec['name']}.sqlite")
    study_id = StudyRunner(parse_study(spec, spec["name"]), store).run()
    return store.cells(study_id)


def test_every_asgi_server_is_measured_on_what_it_says(tmp_path: Path):
    for name in ASYNC:
        require(name)
    cells = _run(
        tmp_path,
        {
            "name": "asgi-small",
            "servers": ASYNC,
            "repeats": 1,
            "load": [
                {"name": "c", "model": "closed", "levels": [16], "duration_s": 1, "warmup_s": 0.2}
            ],
        },
    )
    assert {c.server for c in cells} == set(ASYNC)
    for cell in cells:
        assert measured_or_engine_bound(cell), (cell.server, cell.status, cell.reason)
        assert "fallback" not in server_flags(cell.diagnoses), cell.diagnoses
        wanted = dict(get(cell.server).expects)
        assert {k: cell.isolation["runtime"][k] for k in wanted} == wanted, cell.isolation
        # the bytes it puts on the wire for the same reply, stored beside its numbers
        caps = cell.capabilities
        assert caps["pong"] and caps["keep_alive"] and caps["wire_bytes"] >= 60, caps
        assert (
            caps["wire_head"].startswith("HTTP/1.1 200") and "content-length" in caps["wire_head"]
        )
    uvicorn = next(c for c in cells if c.server == "uvicorn")
    assert uvicorn.capabilities["wire_head"] == "HTTP/1.1 200 OK | content-type, content-length"


def test_seed_001_in_asgi_awaited_against_blocking_sleep(tmp_path: Path):
    require("uvicorn")
    sleep_s = 0.2
    spec = {
        "name": "asgi-sleep",
        "servers": ["uvicorn"],
        "repeats": 1,
        "app": "sleep",
        "app_env": {"WSGIBENCH_SLEEP_S": str(sleep_s)},
        "load": [
            {
                "name": "ab",
                "model": "count",
                "http": "1.0",
                "keep_alive": False,
                "requests": 80,
                "levels": [40],
                "timeout_s": 60,
                "warmup_s": 0,
            }
        ],
    }
    with quiet_cpus() as quiet:  # 40 sleeps at once serve 175/s only on CPUs nothing else takes
        (awaited,) = _run(tmp_path, spec)
        spec = {
            **spec,
            "name": "asgi-sleep-blocking",
            "app_env": {**spec["app_env"], "WSGIBENCH_SLEEP_BLOCKING": "1"},
        }
        (blocking,) = _run(tmp_path, spec)
    expect_measured(awaited)
    expect_measured(blocking)
    fast = Store(tmp_path / "asgi-sleep.sqlite").repeats(awaited.id)[0]["rps_ok"]
    slow = Store(tmp_path / "asgi-sleep-blocking.sqlite").repeats(blocking.id)[0]["rps_ok"]
    with quiet.figures():
        assert fast >= 35 / sleep_s, fast  # 40 sleeping at once
        assert 0.8 / sleep_s <= slow <= 1.2 / sleep_s, slow  # one at a time


def test_uvicorn_without_uvloop_is_flagged_as_a_fallback(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("WSGIBENCH_HOME", str(tmp_path / "home"))
    env = venvs.install(get("uvicorn").env)
    uv = venvs.uv_binary()
    subprocess.run(
        [uv, "pip", "uninstall", "--python", str(env.python), "uvloop", "httptools"],
        check=True,
        capture_output=True,
        env={**os.environ, **venvs.installer_env()},
    )
    (cell,) = _run(
        tmp_path,
        {
            "name": "asgi-fallback",
            "servers": ["uvicorn"],
            "repeats": 1,
            "load": [
                {"name": "c", "model": "closed", "levels": [4], "duration_s": 0.5, "warmup_s": 0}
            ],
        },
    )
    assert cell.isolation["runtime"]["loop"] == "asyncio"
    assert cell.isolation["runtime"]["http"] == "h11"
    (fallback,) = [d for d in cell.diagnoses if d["code"] == "fallback"]
    assert "loop asyncio (not uvloop)" in fallback["message"]
    assert "http h11 (not httptools)" in fallback["message"]


def test_the_db_app_in_asgi_on_async_drivers(tmp_path: Path):
    """uvicorn serves the ASGI db app on SQLite (aiosqlite), and on a PostgreSQL (psycopg's async
    connection) and a MariaDB (aiomysql) that wsgibench starts: every reply a valid sum. The
    pool is opened at lifespan startup: without it no request could be answered."""
    require("uvicorn")
    kinds = ["mariadb", "postgresql", "sqlite"]
    # A warm-up first (its replies are not counted): two CI runs lost one of the 300 replies of the
    # first repeat on PostgreSQL, never reproduced here; the message below says how, if again.
    load = {"model": "count", "requests": 300, "levels": [20], "warmup_s": 0.5, "timeout_s": 30}
    spec = {
        "name": "asgi-db",
        "servers": ["uvicorn"],
        "repeats": 1,
        "app": "db",
        "load": [{"name": kind, "database": kind, **load} for kind in kinds],
    }
    store = Store(tmp_path / "asgi-db.sqlite")
    cells = store.cells(StudyRunner(parse_study(spec, "asgi-db"), store).run())
    assert sorted(c.load for c in cells) == kinds
    for cell in cells:
        expect_measured(cell, cell.load)
        (rep,) = store.repeats(cell.id)
        plan = json.loads(rep["engine_json"])["plan"]
        assert plan["requests"][0]["expect"]["body_float"] == {"min": 30, "max": 70}
        totals = json.loads(rep["engine_json"])["totals"]
        said = {k: totals.get(k) for k in ("requests_sent", "responses", "ok", "errors")}
        said |= {"bad_status_codes": totals.get("bad_status_codes"), "ok_column": rep["ok"]}
        assert rep["ok"] == 300 and rep["errors"] == 0, (cell.load, said)
        assert cell.isolation["database"]["kind"] == cell.load
