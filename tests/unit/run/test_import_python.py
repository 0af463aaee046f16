"""Where one's own app's import is checked before the first cell: the first server of the load
with a venv of its own (its Python, its packages, nothing of wsgibench's), then one on
wsgibench's interpreter, and wsgibench's base interpreter only when no server is installed."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from wsgibench.run import appcheck

RECIPES = {
    "nginx-baseline": SimpleNamespace(apps=("pong",), no_python_app="", env=None),
    "wsgiref": SimpleNamespace(apps=(), no_python_app="", env=None),
    "waitress": SimpleNamespace(apps=(), no_python_app="", env="waitress-env"),
    "bjoern": SimpleNamespace(apps=(), no_python_app="", env="bjoern-env"),
}
PYTHONS = {
    "wsgiref": Path("/own/bin/python"),
    "waitress": Path("/envs/waitress/bin/python"),
    "bjoern": Path("/envs/bjoern/bin/python"),
}


def _patched(monkeypatch, installed: set[str]) -> None:
    by_recipe = {id(r): name for name, r in RECIPES.items()}
    monkeypatch.setattr(appcheck, "get", RECIPES.__getitem__)
    monkeypatch.setattr(
        appcheck, "availability", lambda r: (by_recipe[id(r)] in installed, "not installed")
    )
    monkeypatch.setattr(appcheck, "server_python", lambda r: PYTHONS.get(by_recipe[id(r)]))
    monkeypatch.setattr(appcheck, "base_python", lambda: "/base/python")


def test_the_first_server_with_a_venv_of_its_own(monkeypatch):
    _patched(monkeypatch, {"nginx-baseline", "wsgiref", "waitress", "bjoern"})
    servers = ("nginx-baseline", "wsgiref", "waitress", "bjoern")
    assert appcheck.import_python(servers) == (
        "/envs/waitress/bin/python",
        "waitress's environment",
    )


def test_one_on_wsgibenchs_interpreter_then_the_base_one(monkeypatch):
    _patched(monkeypatch, {"nginx-baseline", "wsgiref"})
    servers = ("nginx-baseline", "wsgiref", "waitress")
    assert appcheck.import_python(servers) == ("/own/bin/python", "wsgiref's environment")
    _patched(monkeypatch, {"nginx-baseline"})
    python, where = appcheck.import_python(servers)
    assert python == "/base/python" and "no server of the load is installed" in where
