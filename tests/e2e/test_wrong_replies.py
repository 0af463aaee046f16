"""What went wrong, shown, through the installed script: a wrong `expect` stops the run in seconds
quoting the difference, a 500 quoted with its status and body; a run that measures nothing exits
4 and `show --wide`, `show --format json` and `export` quote the wrong replies (as text, escaped);
a server, study or level that matches nothing is an error naming the nearest; and one's own app
whose import works in wsgibench's interpreter but not in the servers' fails where they would."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from wsgibench.machine.venvs import base_interpreter
from wsgibench.run.serve import server_python

from .helpers import cli, require
from .procs import none_left

APP = '''
"""Items by id; /down answers 500 with an escape sequence in its body."""
import json

def app(environ, start_response):
    if environ["PATH_INFO"] == "/down":
        body = b"database down \\x1b[2J<b>[red]x[/]</b>"
        start_response("500 Internal Server Error", [("Content-Length", str(len(body)))])
        return [body]
    body = json.dumps({"items": [{"id": i} for i in range(1, 8)][:4] + [{"id": 7}]}).encode()
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(body)))])
    return [body]
'''


def _study(folder: Path, requests: str, servers: str = '["waitress"]') -> Path:
    (folder / "items.py").write_text(textwrap.dedent(APP))
    study = folder / "study.toml"
    study.write_text(
        f'name = "items"\nservers = {servers}\napp = "items.py:app"\nrepeats = 1\n'
        'probe = { path = "/", status = 200 }\n'
        + textwrap.dedent(requests)
        + '[[load]]\nname = "closed"\nmodel = "closed"\nlevels = [4]\nduration_s = 0.5\n'
    )
    return study


def _run(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cli(*args), capture_output=True, text=True, timeout=timeout, cwd=cwd)


def _last(proc: subprocess.CompletedProcess) -> str:
    return [line for line in proc.stderr.splitlines() if line.strip()][-1]


def test_a_wrong_expect_stops_in_seconds_quoting_the_difference(tmp_path: Path, own_tag: str):
    require("waitress")
    study = _study(
        tmp_path,
        """
        [[requests]]
        name = "item"
        path = "/items"
        expect = { status = 200, json = { "items.4.id" = 8 } }
        """,
    )
    started = time.monotonic()
    proc = _run(tmp_path, "run", str(study), "--results", "r.sqlite", "--no-install")
    took = time.monotonic() - started
    assert proc.returncode == 2, (proc.stdout + proc.stderr)[-2000:]
    last = _last(proc)
    assert "load closed, request kind item (GET /items) on waitress" in last, last
    assert "json items.4.id: got 7, expected 8" in last, last
    assert 'its body: "{"items": [{"id": 1}, ' in last, last
    assert took < 60, f"took {took:.0f} s: the load must not have run"
    with sqlite3.connect(tmp_path / "r.sqlite") as db:
        assert db.execute("SELECT count(*) FROM cells").fetchone() == (0,)
    assert none_left(own_tag) == []  # of the processes this test started


def test_a_500_before_the_load_is_quoted_with_its_status_and_body(tmp_path: Path):
    require("waitress")
    study = _study(tmp_path, '[[requests]]\nname = "down"\npath = "/down"\n')
    proc = _run(tmp_path, "run", str(study), "--results", "r.sqlite", "--no-install")
    assert proc.returncode == 2, (proc.stdout + proc.stderr)[-2000:]
    last = _last(proc)
    assert "request kind down (GET /down) on waitress" in last, last
    assert "status 500, expected 200" in last, last
    # the body's first bytes, the escape sequence written as one, the markup as text
    assert 'its body: "database down \\x1b[2J<b>[red]x[/]</b>"' in last, last
    assert "\x1b[2J" not in proc.stderr


ONCE = '''
"""/items answers once, ever (the check before the load), then 500 to every request."""
import os

def app(environ, start_response):
    if environ["PATH_INFO"] == "/items" and os.path.exists("answered"):
        start_response("500 Internal Server Error", [("Content-Length", "4")])
        return [b"gone"]
    if environ["PATH_INFO"] == "/items":
        open("answered", "w").close()
    start_response("200 OK", [("Content-Length", "5")])
    return [b"Pong!"]
'''


def _nothing(tmp_path: Path) -> subprocess.CompletedProcess:
    """A study whose app answers its request kind right once, before the load, then 500 to
    every request: the check passes, the cell is disqualified, nothing is measured."""
    require("waitress")
    (tmp_path / "once.py").write_text(textwrap.dedent(ONCE))
    study = tmp_path / "nothing.toml"
    study.write_text(
        'name = "nothing"\nservers = ["waitress"]\napp = "once.py:app"\nrepeats = 1\n'
        f'app_workdir = "{tmp_path}"\nprobe = {{ path = "/", status = 200 }}\n'
        '[[requests]]\nname = "items"\npath = "/items"\n'
        '[[load]]\nname = "closed"\nmodel = "closed"\nlevels = [4]\nduration_s = 0.5\n'
    )
    return _run(tmp_path, "run", str(study), "--results", "r.sqlite", "--no-report")


def test_a_run_that_measures_nothing_exits_4_and_its_wrong_replies_are_quoted(tmp_path: Path):
    proc = _nothing(tmp_path)
    assert proc.returncode == 4, (proc.stdout + proc.stderr)[-2000:]
    last = _last(proc)
    assert last.startswith("error: nothing was measured: every one of the 1 cells was"), last
    assert "waitress: disqualified" in last and "status 500, expected 200" in last, last
    wide = _run(tmp_path, "show", "r.sqlite", "--wide")
    assert wide.returncode == 0, wide.stderr
    text = wide.stdout
    assert "waitress: the first wrong reply of each class, as received:" in text, text
    assert "items: bad_status: status 500, expected 200" in text
    assert "< HTTP/1.1 500 Internal Server Error" in text and 'body: "gone"' in text
    doc = json.loads(_run(tmp_path, "show", "r.sqlite", "--format", "json", "--wide").stdout)
    (cell,) = doc["cells"]
    assert cell["status"] == "disqualified" and isinstance(cell["errors %"], float)
    assert cell["wrong_replies"] == ["items: bad_status: status 500, expected 200"]
    exported = json.loads(_run(tmp_path, "export", "r.sqlite", "--format", "json").stdout)
    (rep,) = exported["cells"][0]["repeats"]
    (quoted,) = rep["engine"]["kinds"][0]["wrong_replies"]
    assert quoted["status"] == 500 and quoted["head"].startswith("HTTP/1.")
    csv_text = _run(tmp_path, "export", "r.sqlite").stdout
    assert "items: bad_status: status 500, expected 200" in csv_text


def test_a_filter_that_matches_nothing_names_the_nearest(tmp_path: Path):
    assert _nothing(tmp_path).returncode == 4
    cases = {
        ("history", "r.sqlite", "--server", "waitres"): "did you mean waitress?",
        ("history", "r.sqlite", "--study", "nothin"): "did you mean nothing?",
        ("show", "r.sqlite", "--server", "waitres"): "did you mean waitress?",
        ("show", "r.sqlite", "--level", "0"): "no level 0 in study",
        ("show", "r.sqlite", "--study", "9"): "no study with id 9",
    }
    for argv, said in cases.items():
        proc = _run(tmp_path, *argv)
        assert proc.returncode == 2, (argv, proc.stdout[-500:], proc.stderr)
        assert said in _last(proc), (argv, _last(proc))
    history = _run(tmp_path, "history", "r.sqlite", "--study", "nothin")
    assert "no finished run in" not in history.stderr  # the store holds one: of another study


def _packages(python: str) -> set[str]:
    probe = (
        "import pkgutil, json; "
        "print(json.dumps(sorted({m.name for m in pkgutil.iter_modules() if m.ispkg})))"
    )
    out = subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True).stdout
    return set(json.loads(out))


def _only_in_wsgibench(server: str) -> str | None:
    """A package wsgibench's interpreters import (its base one first: where the check ran
    before) and the server's environment does not."""
    theirs = _packages(str(server_python(require(server))))
    for python in (base_interpreter(), sys.executable):
        for name in sorted(_packages(python) - theirs):
            if name.isidentifier() and not name.startswith("_"):
                ok = subprocess.run([python, "-I", "-c", f"import {name}"], capture_output=True)
                if ok.returncode == 0:
                    return name
    return None


def test_the_import_check_fails_where_the_servers_would(tmp_path: Path):
    # One's own app importing a module wsgibench's own environment has and the servers' do not:
    # the check runs in the first server's environment, so it fails there, with the hint, before
    # any server starts.
    module = _only_in_wsgibench("waitress")
    assert module is not None, "wsgibench's environment has no package the waitress venv lacks"
    (tmp_path / "needs.py").write_text(
        f"import {module}\n\n\ndef app(environ, start_response):\n"
        '    start_response("200 OK", [("Content-Length", "5")])\n    return [b"Pong!"]\n'
    )
    proc = _run(
        tmp_path, "run", "quick", "--app", "needs.py:app", "--servers", "waitress",
        "--no-ceiling", "--levels", "4", "--duration", "0.5", "--repeats", "1",
        "--results", "r.sqlite", "--no-report", "--no-install",
    )  # fmt: skip
    assert proc.returncode == 2, (proc.stdout + proc.stderr)[-2000:]
    last = _last(proc)
    assert last.startswith("error: app needs.py:app does not import in waitress's environment")
    assert f"No module named '{module}'" in last and "--requirements requirements.txt" in last
