"""An app's own dependencies: a package it pins at another version than a server's venv is a
conflict naming both pins; the installers' own packages are never one; compare names an app's
lock and packages that changed between two runs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from wsgibench.machine.appdeps import AppDeps
from wsgibench.results.compare import _package_changes


def _deps(**packages: str) -> AppDeps:
    return AppDeps(Path("/x/site"), Path("/x/requirements.lock"), "a" * 64, packages)


def test_a_conflict_names_the_app_the_server_and_both_pins():
    deps = _deps(flask="3.1.3", h11="0.9.0", pip="24.0", click="8.5.1")
    server = {"uvicorn": "0.54.0", "h11": "0.16.0", "pip": "25.1", "click": "8.5.1"}
    assert deps.conflicts(server, "uvicorn", "svc:app") == [
        "app svc:app pins h11==0.9.0 but server uvicorn pins h11==0.16.0"
    ]
    assert deps.conflicts({"flask": "3.1.3"}, "granian", "svc:app") == []


def _cell(app: dict | None, **packages: str) -> SimpleNamespace:
    return SimpleNamespace(server_info={"packages": packages, "app": app})


def test_compare_names_the_apps_lock_and_packages_when_they_differ():
    before = {"name": "svc:app", "lock_sha256": "1" * 64, "packages": {"flask": "3.1.2"}}
    after = {"name": "svc:app", "lock_sha256": "2" * 64, "packages": {"flask": "3.1.3"}}
    changes = _package_changes(_cell(before, gunicorn="27.0.1"), _cell(after, gunicorn="27.0.1"))
    assert changes == ["app: flask 3.1.2 → 3.1.3", "app svc:app: lock 111111111111 → 222222222222"]
    same = _package_changes(_cell(before, gunicorn="27.0.1"), _cell(before, gunicorn="27.0.1"))
    assert same == []
    server_only = _package_changes(_cell(None, gunicorn="26.0"), _cell(None, gunicorn="27.0.1"))
    assert server_only == ["gunicorn 26.0 → 27.0.1"]
