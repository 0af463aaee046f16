"""Realistic scenarios without running anything: the db app's spec, databases on loads, scale_cpus,
per-app recipes, the built-in studies."""

from __future__ import annotations

import os

import pytest

from wsgibench.errors import UsageError
from wsgibench.results.store import Store
from wsgibench.run.cell import place
from wsgibench.run.study import StudyRunner
from wsgibench.servers import Flavour, get
from wsgibench.study.apps import get_app
from wsgibench.study.model import load_study, parse_study

LOAD = {"name": "c", "model": "count", "requests": 10, "levels": [5]}


def test_db_app_validates_a_float_near_50():
    app = get_app("db")
    (kind,) = app.requests
    assert kind.expect == {"status": 200, "body_float": {"min": 30, "max": 70}}
    assert app.database == "sqlite" and app.env["WSGIBENCH_DB_KIND"] == "sqlite"


def test_load_database_key():
    study = parse_study(
        {
            "servers": ["waitress"],
            "app": "db",
            "load": [{**LOAD, "database": "mariadb"}, {**LOAD, "name": "d"}],
        },
        "t",
    )
    assert [load.database for load in study.loads] == ["mariadb", None]
    with pytest.raises(UsageError, match="uses none"):
        parse_study({"servers": ["waitress"], "load": [{**LOAD, "database": "sqlite"}]}, "t")


def test_scale_cpus_makes_one_load_per_count(tmp_path):
    usable = len(os.sched_getaffinity(0))
    counts = list(range(1, usable + 1))
    study = parse_study({"servers": ["gunicorn-sync"], "scale_cpus": counts, "load": [LOAD]}, "t")
    assert [(load.name, load.cpus) for load in study.loads] == [(f"c-{n}cpu", n) for n in counts]
    with pytest.raises(UsageError, match="scale_cpus"):
        parse_study({"servers": ["gunicorn-sync"], "scale_cpus": [usable + 1], "load": [LOAD]}, "t")
    with pytest.raises(UsageError, match="scale_cpus"):
        parse_study({"servers": ["gunicorn-sync"], "scale_cpus": [0], "load": [LOAD]}, "t")
    runner = StudyRunner(study, Store(tmp_path / "r.sqlite"))
    cpus = sorted(os.sched_getaffinity(0))
    gunicorn = get("gunicorn-sync")
    p = place(study.loads[-1], study, gunicorn, runner.layout, runner.topology)
    assert p.workers == usable and p.server_cpus == cpus
    assert p.engine_cpus == cpus and p.shared and "shares" in p.shared
    if usable > 1:
        p = place(study.loads[0], study, gunicorn, runner.layout, runner.topology)
        assert p.workers == 1 and p.server_cpus == cpus[:1] and p.engine_cpus == cpus[1:]
        assert p.shared is None


def test_recipes_for_scenarios():
    assert get("tornado-native-sync").apps == ("sleep", "mixed")
    assert get("tornado-native-async").apps == ("sleep", "mixed")
    php = get("php-fpm-nginx")
    assert php.flavour == Flavour.REFERENCE and str(php.flavour) == "non-Python reference"
    assert set(php.apps) == {"pong", "db"}
    assert get("gunicorn-sync").apps == ()  # every app


@pytest.mark.parametrize("name", ["tornado2015", "tornado2015-mixed", "db2011", "scaling"])
def test_builtin_scenario_studies_parse(name):
    study = load_study(name)
    assert study.cell_count() > 0
    if name == "db2011":
        assert [load.database for load in study.loads] == ["sqlite", "postgresql", "mariadb"]
        assert all(
            load.params["requests"] == 1000 and load.levels == (100,) for load in study.loads
        )
        assert "php-fpm-nginx" in study.servers and study.workers == 1
    if name == "tornado2015-mixed":
        assert {r.name for r in study.requests} == {"slow", "fast"}
    if name == "scaling":  # 1, 2, 4, ... server CPUs while the engine keeps half as many
        usable = len(os.sched_getaffinity(0))
        counts = [load.cpus for load in study.loads]
        assert counts and counts[0] == 1 and all(n + -(-n // 2) <= usable for n in counts)
        assert study.workers == "auto"
        if usable < 3:
            assert study.skipped and "skipped 2 server CPUs" in study.skipped[0]
    if name == "tornado2015":
        assert {"tornado-native-sync", "tornado-native-async"} <= set(study.servers)
