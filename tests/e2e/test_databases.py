"""The db app on real databases that wsgibench itself starts: SQLite, PostgreSQL, MariaDB.

Nothing is assumed to be running: each backend is initialised, loaded with 1,000,000 rows, served to
real servers (a thread-pool one, a greenlet one and the PHP-FPM reference) and stopped; no database
process may survive.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import psutil
import pytest

from wsgibench import databases as _databases
from wsgibench.errors import EnvironmentProblem, UsageError
from wsgibench.results.store import Store
from wsgibench.run.study import StudyRunner
from wsgibench.study.model import parse_study

from .helpers import expect_measured, require
from .procs import none_left
from .quiet import quiet_cpus

SERVERS = ["gunicorn-gthread", "gunicorn-gevent", "php-fpm-nginx"]
KINDS = ["sqlite", "postgresql", "mariadb"]
VERSION_PREFIX = {"sqlite": "SQLite 3.", "postgresql": "PostgreSQL 1", "mariadb": "MariaDB 1"}


def _alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.fixture(scope="module")
def db_study(tmp_path_factory):
    for name in SERVERS:
        require(name)
    study = parse_study(
        {
            "name": "db-small",
            "app": "db",
            "servers": SERVERS,
            "repeats": 1,
            "random_order": False,
            "load": [
                {
                    "name": kind,
                    "database": kind,
                    "model": "count",
                    "requests": 300,
                    "levels": [20],
                    "warmup_s": 0,
                    "timeout_s": 30,
                }
                for kind in KINDS
            ],
        },
        "db-small",
    )
    store = Store(tmp_path_factory.mktemp("db") / "results.sqlite")
    runner = StudyRunner(study, store)
    seen: dict[str, list[int]] = {}

    def on_cell(cell, _outcome) -> None:
        db = runner.databases.db
        if db is not None:
            seen.setdefault(cell.load.name, []).extend(db.pids())

    with quiet_cpus() as quiet:  # every process the run starts carries quiet.tag
        study_id = runner.run(on_cell)
    return store, study_id, seen, quiet


def test_every_backend_measured_with_valid_floats(db_study):
    store, study_id, _, _ = db_study
    cells = store.cells(study_id)
    assert {(c.server, c.load) for c in cells} == {(s, k) for s in SERVERS for k in KINDS}
    for cell in cells:
        expect_measured(cell, cell.server, cell.load)
        (rep,) = store.repeats(cell.id)
        engine = json.loads(rep["engine_json"])
        # body_float 30..70 is checked by the engine on every reply
        assert engine["plan"]["requests"][0]["expect"]["body_float"] == {"min": 30, "max": 70}
        errors = {k: v for k, v in engine["totals"]["errors"].items() if v}
        quoted = [w for kind in engine["kinds"] for w in kind.get("wrong_replies") or []]
        said = (cell.server, cell.load, errors, quoted, cell.notes)
        # every request answered and counted, exactly: a float in range, or an error of its class
        assert rep["ok"] + sum(errors.values()) == 300 == rep["ok"] + rep["errors"], said
        # no answer that passed as a reply held a float out of range, or none
        assert "bad_body" not in errors, said
        # A wrong status is quoted as the server sent it. gunicorn-gthread on PostgreSQL answered
        # one request of 300 wrongly in 1 of about 20 runs on the 2-CPU machine (not yet
        # explained): the cell stays measured under the error threshold, its error counted.
        wrong = {w["error"] for w in quoted}
        assert {"bad_status", "protocol_error"} & set(errors) <= wrong, said
        assert sum(errors.values()) <= 1, said
        assert rep["rss_start_bytes"] and rep["rss_end_bytes"]


def test_database_loaded_and_recorded(db_study):
    store, study_id, _, quiet = db_study
    for cell in store.cells(study_id):
        db = cell.isolation["database"]
        assert db["kind"] == cell.load
        assert db["version"].startswith(VERSION_PREFIX[cell.load]), db
        assert db["rows"] == 1_000_000
        assert f"database: {db['version']}" in cell.notes
        if cell.load != "sqlite":  # the SQLite file is built once and reused
            assert db["load_s"] is not None, db
            with quiet.figures():  # a million rows in 30 s: on CPUs nothing else takes
                assert db["load_s"] < 30, db


def test_report_names_each_database_and_version(db_study, tmp_path):
    store, study_id, _, _ = db_study
    out = tmp_path / "report"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "wsgibench",
            "report",
            str(store.path),
            "--out",
            str(out),
            "--no-png",
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    html = (out / "report.html").read_text()
    for kind in KINDS:
        versions = {
            c.isolation["database"]["version"] for c in store.cells(study_id) if c.load == kind
        }
        (version,) = versions
        assert version.startswith(VERSION_PREFIX[kind]) and version in html


def test_databases_stopped_without_orphans(db_study):
    _, _, seen, quiet = db_study
    assert set(seen) >= {"postgresql", "mariadb"}
    assert all(seen[k] for k in ("postgresql", "mariadb")), seen
    assert _alive(sorted({p for pids in seen.values() for p in pids})) == []
    assert none_left(quiet.tag) == []  # nothing the run started, databases or servers


def test_database_start_stop_directly(tmp_path):
    """The interface on its own: start() gives the app's settings, stop() ends every process."""
    db = _databases.PostgreSQL(tmp_path, [0])
    try:
        env = db.start()
        pids, datadir = db.pids(), db.datadir
        assert datadir is not None and datadir.is_dir()
        assert env["WSGIBENCH_DB_KIND"] == "postgresql" and int(env["WSGIBENCH_DB_PORT"]) > 0
        assert db.rows == 1_000_000 and db.load_s < 30
        assert len(pids) > 2  # postmaster and its helpers
        owner = psutil.Process(pids[0]).username()
        assert owner == "postgres"  # postgres refuses root: it runs as Debian's postgres user
    finally:
        db.stop()
    assert _alive(pids) == []
    assert not datadir.exists()


def test_missing_database_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(_databases.PostgreSQL, "bindir", staticmethod(lambda: None))
    with pytest.raises(EnvironmentProblem, match=r"apt-get install postgresql$"):
        _databases.preflight({"postgresql"})
    monkeypatch.setattr(_databases.MariaDB, "_binary", staticmethod(lambda name: None))
    with pytest.raises(EnvironmentProblem, match=r"apt-get install mariadb-server$"):
        _databases.preflight({"mariadb"})


def test_database_key_only_for_the_db_app():
    load = [{"name": "x", "database": "postgresql", "model": "count", "requests": 1, "levels": [1]}]
    with pytest.raises(UsageError, match="uses none"):
        parse_study({"servers": ["waitress"], "app": "pong", "load": load}, "t")
    with pytest.raises(UsageError, match="database must be one of"):
        parse_study(
            {"servers": ["waitress"], "app": "db", "load": [{**load[0], "database": "oracle"}]}, "t"
        )


def test_builtin_db2011_parses():
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from wsgibench.study.model import load_study;"
            "s = load_study('db2011');"
            "print([(l.name, l.database, l.params['requests'], l.levels) "
            "for l in s.loads])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    loads = ast.literal_eval(proc.stdout)  # levels compare as numbers: 100 == 100.0
    assert ("postgresql", "postgresql", 1000, (100,)) in loads
    assert ("mariadb", "mariadb", 1000, (100,)) in loads
