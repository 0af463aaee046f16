"""Environments are compiled once, so servers start from bytecode as in production: a file that
does not compile is left as it is, and the marker says the environment was compiled."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from wsgibench.machine import bytecode, venvs
from wsgibench.machine.bytecode import COMPILED, compile_tree, ensure_compiled
from wsgibench.servers import get

from .helpers import require


def _tree(tmp_path: Path) -> Path:
    site = tmp_path / "lib" / "site-packages"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("X = 1\n")
    (site / "pkg" / "old.py").write_text('print "python 2"\n')  # a package's leftover
    return site


def _lookup(marker: Path, python: Path | str, site: Path) -> None:
    """What venvs.installed and appdeps.installed do: read the marker, if any, then ensure."""
    try:
        done = json.loads(marker.read_text())
    except OSError:
        return
    ensure_compiled(marker, done, python, site)


def _compiled(site: Path) -> set[str]:
    return {p.name.split(".")[0] for p in site.rglob("*.pyc")}


def test_every_module_that_compiles_is_compiled_and_a_leftover_is_said(tmp_path: Path):
    site, log = _tree(tmp_path), tmp_path / "install.log"
    assert compile_tree(sys.executable, site, log)
    assert _compiled(site) == {"__init__"}
    assert "old.py" in log.read_text()


def test_an_environment_from_before_is_compiled_once_and_marked(tmp_path: Path):
    site, marker = _tree(tmp_path), tmp_path / "wsgibench-env.json"
    marker.write_text(json.dumps({"packages": {"pkg": "1"}}))
    _lookup(marker, sys.executable, site)
    assert _compiled(site) == {"__init__"}
    assert json.loads(marker.read_text()) == {"packages": {"pkg": "1"}, COMPILED: True}
    for pyc in site.rglob("*.pyc"):
        pyc.unlink()
    _lookup(marker, sys.executable, site)  # marked: not compiled again
    assert _compiled(site) == set()


def test_an_environment_this_user_cannot_write_is_left_as_it_is(tmp_path: Path, monkeypatch):
    site, marker = _tree(tmp_path), tmp_path / "wsgibench-env.json"
    marker.write_text(json.dumps({"packages": {}}))
    monkeypatch.setattr(bytecode.os, "access", lambda _path, _mode: False)  # another user's home
    _lookup(marker, sys.executable, site)
    assert json.loads(marker.read_text()) == {"packages": {}} and _compiled(site) == set()
    monkeypatch.undo()
    _lookup(marker, sys.executable, site)  # tried once by this process: not again
    assert _compiled(site) == set()


def test_no_marker_or_no_compiler_changes_nothing(tmp_path: Path):
    site = _tree(tmp_path)
    _lookup(tmp_path / "absent.json", sys.executable, site)
    assert _compiled(site) == set()
    marker = tmp_path / "m.json"
    marker.write_text("{}")
    _lookup(marker, tmp_path / "no-python", site)
    assert json.loads(marker.read_text()) == {}


def test_a_servers_environment_starts_from_bytecode():
    require("gunicorn-gthread")
    env = venvs.installed(get("gunicorn-gthread").env)
    assert env is not None
    assert json.loads((env.path / "wsgibench-env.json").read_text())[COMPILED] is True
    tag = sys.implementation.cache_tag
    assert list(env.path.rglob(f"site-packages/gunicorn/__pycache__/arbiter.{tag}.pyc"))
