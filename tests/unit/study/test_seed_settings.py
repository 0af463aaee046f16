"""The seed studies run their seeds' own settings, and say in `deviations` where they do not: the
settings read from the study files, the recipes' command lines, and the db app's connection mode."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from wsgibench.apps import db as db_app
from wsgibench.machine.topology import build, scaled_layout
from wsgibench.run.cell import place
from wsgibench.servers import LaunchContext, get
from wsgibench.study.model import load_study
from wsgibench.study.overrides import Overrides, load_with

SEED_STUDIES = [
    "piel2010",
    "piel2010-c10k",
    "tornado2015",
    "tornado2015-mixed",
    "db2011",
    "seed003",
    "goldberg2016",
]
FOUR = build(list(range(4)), [(c,) for c in range(4)], [tuple(range(4))])


def _placed(study, server: str, cpus: int = 1):
    return place(study.loads[0], study, get(server), scaled_layout(FOUR, cpus), FOUR)


@pytest.mark.parametrize("name", SEED_STUDIES)
def test_every_seed_study_says_how_it_departs_from_its_seed(name):
    for full in (False, True):
        if full and name not in ("goldberg2016", "seed003", "piel2010-c10k"):
            continue
        study = load_with(name, Overrides(full=full))[0]
        deviations = study.raw["deviations"]  # stored as config["deviations"] with the run
        assert len(deviations) >= 3, name
        for sentence in deviations:
            assert sentence.strip() == sentence and sentence.endswith("."), (name, sentence)
            assert "\n" not in sentence and len(sentence) < 500, (name, sentence)


def test_seed003_runs_uwsgi_and_uwsgibase_beside_seed_004s_servers_as_seed_004_ran_them():
    seed003, goldberg = load_study("seed003"), load_study("goldberg2016")
    assert {"uwsgi-http11", "uwsgi-http11-base", "uwsgi-http-keepalive"} <= set(seed003.servers)
    assert set(goldberg.servers) <= set(seed003.servers)  # meinheld's site example, cheroot ...
    assert "meinheld" not in seed003.servers and "cherrypy" not in seed003.servers
    for cpus, (a, b) in (
        (1, (seed003, goldberg)),
        (2, (_full_of("seed003"), _full_of("goldberg2016"))),
    ):
        for server in goldberg.servers:
            assert _placed(a, server, cpus).workers == _placed(b, server, cpus).workers, server
        assert _placed(a, "gunicorn-sync", cpus).workers == 2 * cpus + 1
        assert _placed(a, "mod-wsgi", cpus).workers == 2 * cpus
        assert _placed(a, "bjoern", cpus).workers == 1
        base = _placed(a, "uwsgi-http11-base", cpus)
        assert (base.workers, base.server_threads) == (5, 1)
        threaded = _placed(a, "uwsgi-http11", cpus)
        assert (threaded.workers, threaded.server_threads) == (5, 2)


def _full_of(name: str):
    return load_with(name, Overrides(full=True))[0]


def _ctx(tmp_path: Path, threads: int = 1) -> LaunchContext:
    return LaunchContext(
        host="127.0.0.1",
        port=8000,
        internal_port=8001,
        workers=5,
        threads=threads,
        backlog=2048,
        app="pong",
        app_dir=tmp_path,
        workdir=tmp_path,
        python=tmp_path / "bin" / "python",
    )


def test_uwsgibase_is_the_http11_socket_with_processes_only(tmp_path):
    recipe = get("uwsgi-http11-base")
    assert recipe.launch is not None
    (command,) = recipe.launch(_ctx(tmp_path, threads=2))
    argv = command.argv
    assert "--http11-socket" in argv and argv[argv.index("--processes") + 1] == "5"
    assert "--threads" not in argv and "--http" not in argv


def test_uwsgi_behind_nginx_has_seed_000s_socket_timeout(tmp_path):
    recipe = get("uwsgi-nginx")
    assert recipe.launch is not None
    backend, _nginx = recipe.launch(_ctx(tmp_path))
    assert backend.argv[backend.argv.index("--socket-timeout") + 1] == "30"


def test_piel2010_runs_seed_000s_box_and_servers():
    study = load_study("piel2010")
    assert study.memory_limit_mb == 1024 and study.server_cpu_count == 1
    assert "cheroot" in study.servers and "cherrypy" not in study.servers
    assert "uwsgi-nginx" in study.servers
    mod_wsgi = _placed(study, "mod-wsgi")
    assert (mod_wsgi.workers, mod_wsgi.server_threads) == (1, 1000)
    http10 = {load.name: load for load in study.loads}["http10"]
    for failed_past in (700, 800, 1500, 1900, 2000):  # each failure point of the seed, bracketed
        assert any(level < failed_past for level in http10.levels)
        assert failed_past in http10.levels
        assert any(level > failed_past for level in http10.levels)
    assert len(http10.levels) <= 12  # 400 connections a level: a short one, but a cell per server
    assert load_study("piel2010-c10k").memory_limit_mb == 1024


def test_db2011_gives_each_server_process_one_connection_and_128_mb():
    study = load_study("db2011")
    assert study.memory_limit_mb == 128 and study.server_cpu_count == 1
    assert study.app_env["WSGIBENCH_DB_CONNECTIONS"] == "process"
    assert (study.workers, study.threads) == (1, 1)


@pytest.fixture
def sqlite_db(tmp_path, monkeypatch):
    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE test(id INTEGER PRIMARY KEY, value REAL)")
        conn.executemany("INSERT INTO test VALUES (?, 0.5)", [(i,) for i in range(1, 1001)])
    monkeypatch.setenv("WSGIBENCH_DB_PATH", str(path))
    monkeypatch.setattr(db_app, "KIND", "sqlite")
    opened: list[object] = []
    connect = db_app._connect

    def counted():
        opened.append(conn := connect())
        return conn

    monkeypatch.setattr(db_app, "_connect", counted)
    return opened


def _from_threads(n: int) -> None:
    errors: list[BaseException] = []

    def one() -> None:
        try:
            for _ in range(3):
                db_app._sum()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_db_app_process_mode_shares_one_connection_per_process(sqlite_db, monkeypatch):
    monkeypatch.setattr(db_app, "CONNECTIONS", "process")
    monkeypatch.setitem(db_app._shared, "pid", None)
    _from_threads(4)
    assert len(sqlite_db) == 1  # four threads, one connection
    monkeypatch.setattr(db_app.os, "getpid", lambda: -1)  # as in a forked worker
    db_app._sum()
    assert len(sqlite_db) == 2


def test_db_app_thread_mode_opens_one_connection_per_thread(sqlite_db, monkeypatch):
    monkeypatch.setattr(db_app, "CONNECTIONS", "thread")
    _from_threads(4)
    assert len(sqlite_db) == 4
