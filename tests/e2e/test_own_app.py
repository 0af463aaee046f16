"""One's own app, through the installed `wsgibench` script: a file written here (outside the
package) with a requirement of its own from the registry, on a WSGI server, an ASGI server and a
server that serves both; every reply validated against the study's rule (a wrong rule makes every
reply an error of its class), the lock's hash stored per cell, and a broken requirement or an app
that does not import stopped at start-up in one line naming the app."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import textwrap
from pathlib import Path

from wsgibench.machine import appdeps
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.store import Store

from .helpers import cli, expect_measured, require
from .procs import none_left

APP = '''
"""A service of its own: WSGI and ASGI sides, a requirement from the registry (humanize)."""
import json
import humanize

# Read from the working directory the study names (app_workdir): every server runs it there.
WORD = open("greeting.txt").read().strip()

def _greet(query):
    name = query.split("name=", 1)[1] if "name=" in query else "world"
    return json.dumps({"greeting": f"{WORD} {name}", "size": humanize.naturalsize(2048)}).encode()

def wsgi_app(environ, start_response):
    if environ["PATH_INFO"] == "/health":
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]
    body = _greet(environ.get("QUERY_STRING", ""))
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(body)))])
    return [body]

async def asgi_app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["path"] == "/health":
        body, kind = b"ok", b"text/plain"
    else:
        body, kind = _greet(scope["query_string"].decode()), b"application/json"
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
'''

SERVERS = ("gunicorn-gthread", "uvicorn", "granian", "granian-asgi")


def _study(folder: Path, size: str = "2.0 kB", requirement: str = "humanize==4.12.3") -> Path:
    (folder / "service.py").write_text(textwrap.dedent(APP))
    (folder / "requirements.txt").write_text(requirement + "\n")
    (folder / "data").mkdir(exist_ok=True)
    (folder / "data" / "greeting.txt").write_text("hello\n")
    study = folder / "study.toml"
    study.write_text(
        textwrap.dedent(
            f"""
            name = "own"
            servers = {json.dumps(list(SERVERS))}
            app = "service.py:wsgi_app"
            app_asgi = "service:asgi_app"
            requirements = "requirements.txt"
            app_workdir = "data"
            probe = {{ path = "/health", status = 200, body = "ok" }}
            repeats = 1

            [[requests]]
            name = "greet"
            path = "/greet"
            query = {{ name = "bench" }}
            [requests.expect]
            status = 200
            content_type = "application/json"
            json = {{ "greeting" = "hello bench", "size" = "{size}" }}

            [[load]]
            name = "closed"
            model = "closed"
            levels = [4]
            duration_s = 0.5
            warmup_s = 0.2
            """
        )
    )
    return study


def _run(study: Path, cwd: Path) -> subprocess.CompletedProcess:
    argv = cli("run", str(study), "--results", "r.sqlite", "--no-report", "--no-install")
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=cwd)


def _cells(cwd: Path) -> dict[str, tuple[object, list[EngineResult]]]:
    store = Store(cwd / "r.sqlite", read_only=True)
    out = {}
    for cell in store.cells(store.study(None)["id"]):
        reps = [
            EngineResult.from_dict(json.loads(r["engine_json"])) for r in store.repeats(cell.id)
        ]
        out[cell.server] = (cell, reps)
    return out


def test_own_app_on_wsgi_asgi_and_both(tmp_path: Path, own_tag: str):
    for name in SERVERS:
        require(name)
    app_dir = tmp_path / "mine"
    app_dir.mkdir()
    proc = _run(_study(app_dir), tmp_path)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "internal error" not in said, said[-3000:]
    cells = _cells(tmp_path)
    assert set(cells) == set(SERVERS)
    locks = set()
    for server, (cell, reps) in cells.items():
        expect_measured(cell, server)
        (rep,) = reps
        totals = rep.totals
        # every reply was read and judged by the study's rule: all valid, none left unjudged
        assert totals.ok > 0 and totals.error_count == 0, (server, totals)
        assert [k.name for k in rep.kinds] == ["greet"]
        app = cell.server_info["app"]
        expected_side = "service:asgi_app" if "ASGI" in app["interface"] else "service:wsgi_app"
        assert app["callable"] == expected_side, (server, app)
        assert app["packages"].get("humanize") == "4.12.3"
        locks.add(app["lock_sha256"])
    deps = appdeps.installed(
        "service:wsgi_app", app_dir / "requirements.txt", None, appdeps_python()
    )
    assert deps is not None and locks == {deps.lock_sha256}
    assert none_left(own_tag) == []  # of the processes this test started


def test_a_wrong_rule_stops_the_run_before_the_load_quoting_the_value(tmp_path: Path):
    # Each kind is sent once before the first cell and judged by the study's rule: a wrong one
    # stops the run (exit 2) with the value the app gave, before any load and any stored cell.
    require("gunicorn-gthread")
    app_dir = tmp_path / "mine"
    app_dir.mkdir()
    study = _study(app_dir, size="3.0 kB")  # the app says 2.0 kB
    text = study.read_text().replace(json.dumps(list(SERVERS)), '["gunicorn-gthread"]')
    study.write_text(text)
    proc = _run(study, tmp_path)
    assert proc.returncode == 2, (proc.stdout + proc.stderr)[-2000:]
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    assert 'json size: got "2.0 kB", expected "3.0 kB"' in last, last
    assert "request kind greet (GET /greet" in last and "on gunicorn-gthread" in last, last
    with sqlite3.connect(tmp_path / "r.sqlite") as db:
        assert db.execute("SELECT count(*) FROM cells").fetchone() == (0,)


def test_a_requirement_a_server_pins_otherwise_names_both(tmp_path: Path):
    require("uvicorn")
    app_dir = tmp_path / "mine"
    app_dir.mkdir()
    study = _study(app_dir, requirement="humanize==4.12.3\nh11==0.14.0")
    study.write_text(study.read_text().replace(json.dumps(list(SERVERS)), '["uvicorn"]'))
    proc = _run(study, tmp_path)
    assert "internal error" not in proc.stdout + proc.stderr
    ((cell, reps),) = _cells(tmp_path).values()
    assert cell.status == "unavailable" and reps == []
    assert "app service:wsgi_app pins h11==0.14.0 but server uvicorn pins h11==0.16.0" in (
        cell.reason or ""
    ), cell.reason


def test_a_broken_requirement_stops_at_start_in_one_line(tmp_path: Path):
    app_dir = tmp_path / "mine"
    app_dir.mkdir()
    study = _study(app_dir, requirement="wsgibench-no-such-package-anywhere==9.9.9")
    proc = _run(study, tmp_path)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode != 0
    assert lines and lines[-1].startswith("error: app service.py:wsgi_app"), proc.stderr
    assert "Traceback" not in proc.stderr and "cannot be resolved" in lines[-1]


def test_an_app_that_does_not_import_stops_at_start_in_one_line(tmp_path: Path):
    app_dir = tmp_path / "mine"
    app_dir.mkdir()
    study = _study(app_dir)
    (app_dir / "service.py").write_text("import no_such_module_of_mine\n")
    proc = _run(study, tmp_path)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode != 0
    # The app named as its study names it.
    assert lines[-1].startswith("error: app service.py:wsgi_app does not import"), proc.stderr
    assert "no_such_module_of_mine" in lines[-1] and "Traceback" not in proc.stderr
    if (tmp_path / "r.sqlite").exists():  # no cell ran: nothing started
        with sqlite3.connect(tmp_path / "r.sqlite") as db:
            assert db.execute("SELECT count(*) FROM cells").fetchone() == (0,)


def test_the_command_line_gives_an_apps_requirements(tmp_path: Path):
    # `run --app` alone: the app's import fails in the servers' environments, and the error says
    # how to name its dependencies; with `--requirements` they are locked, installed and used.
    require("gunicorn-gthread")
    _study(tmp_path)
    (tmp_path / "greeting.txt").write_text("hello\n")  # no app_workdir: the app's own folder
    bare = quick(tmp_path, "service.py:wsgi_app", "gunicorn-gthread", "--path", "/greet")
    last = [line for line in bare.stderr.splitlines() if line.strip()][-1]
    assert bare.returncode != 0 and "Traceback" not in bare.stderr, bare.stderr[-2000:]
    assert last.startswith("error: app service.py:wsgi_app does not import"), last
    assert "No module named 'humanize'" in last and "--requirements requirements.txt" in last
    proc = quick(
        tmp_path, "service.py:wsgi_app", "gunicorn-gthread", "--path", "/greet",
        "--requirements", "requirements.txt",
    )  # fmt: skip
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "--requirements requirements.txt" in proc.stdout
    cell, (rep,) = _cells(tmp_path)["gunicorn-gthread"]
    expect_measured(cell)
    assert rep.totals.ok > 0 and rep.totals.error_count == 0
    assert cell.server_info["app"]["packages"].get("humanize") == "4.12.3"


def quick(cwd: Path, app: str, servers: str, *more: str) -> subprocess.CompletedProcess:
    """`run quick --app APP --servers S [MORE...]` at its smallest, without the ceiling, into
    r.sqlite."""
    argv = cli(
        "run", "quick", "--app", app, "--servers", servers, "--no-ceiling", "--levels", "4",
        "--duration", "0.5", "--repeats", "1", "--results", "r.sqlite", "--no-report",
        "--no-install", *more,
    )  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=cwd)


def test_an_app_that_answers_its_probe_wrongly_is_told_at_once_with_the_answer(tmp_path: Path):
    # No --path: the probe is the app's first GET, "/", which this app answers 404. The server is
    # up and its answer will not change: the cell says so after a few seconds, not the whole start
    # timeout, with the answer and where to name the right request.
    require("waitress")
    (tmp_path / "api.py").write_text(
        "def app(environ, start_response):\n"
        "    start_response('404 Not Found', [('Content-Length', '9')])\n"
        "    return [b'not here!']\n"
    )
    proc = quick(tmp_path, "api:app", "waitress")
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    cell, reps = _cells(tmp_path)["waitress"]
    assert cell.status == "disqualified" and reps == [], (cell.status, cell.reason)
    said = "it answered status 404, body b'not here!' (your app's probe: name it with --path"
    assert said in cell.reason and "for 3 s" in cell.reason, cell.reason
    assert "within" not in cell.reason, cell.reason


FACTORY = """
def create_app(word):
    body = word.encode()
    def app(environ, start_response):
        start_response("200 OK", [("Content-Length", str(len(body)))])
        return [body]
    return app

def create_asgi(word="asgi"):
    body = word.encode()
    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
    return app
"""


def test_an_app_factory_is_called_with_its_arguments_on_every_kind_of_server(tmp_path: Path):
    # gunicorn's own syntax (`module:create_app('x')`), on servers that have none: each imports
    # the app the factory returns, and every reply's body says the arguments reached it.
    servers = ("waitress", "uwsgi-http11", "uvicorn")
    for name in servers:
        require(name)
    (tmp_path / "fac.py").write_text(FACTORY)
    (tmp_path / "s.toml").write_text(
        f"servers = {json.dumps(list(servers))}\n"
        "app = \"fac:create_app('same')\"\n"
        "app_asgi = \"fac:create_asgi(word='same')\"\n"
        "repeats = 1\n"
        '[[requests]]\nname = "r"\npath = "/"\nexpect = { status = 200, body = "same" }\n'
        '[[load]]\nname = "c"\nmodel = "closed"\nlevels = [4]\nduration_s = 0.5\n'
    )
    proc = _run(tmp_path / "s.toml", tmp_path)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    cells = _cells(tmp_path)
    for server in servers:
        cell, (rep,) = cells[server]
        expect_measured(cell, server)
        assert rep.totals.ok > 0 and rep.totals.error_count == 0, (server, rep.totals)
    assert cells["uvicorn"][0].server_info["app"]["callable"] == "fac:create_asgi(word='same')"
    # The factory named without its call would be served as the app: refused at start, said so.
    (tmp_path / "s.toml").write_text(
        (tmp_path / "s.toml").read_text().replace("create_asgi(word='same')", "create_asgi")
    )
    bare = _run(tmp_path / "s.toml", tmp_path)
    last = [line for line in bare.stderr.splitlines() if line.strip()][-1]
    assert bare.returncode != 0 and "Traceback" not in bare.stderr, bare.stderr[-2000:]
    assert "takes no arguments: an app factory? name its call, fac:create_asgi()" in last, last


ASGI_ONLY = """
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"hi"})
"""


def test_the_command_line_names_an_app_whose_interface_is_read(tmp_path: Path):
    require("gunicorn-gthread")
    require("uvicorn")
    (tmp_path / "asgi_only.py").write_text(ASGI_ONLY)
    argv = cli(
        "run", "quick", "--app", "asgi_only.py:app", "--path", "/x", "--expect-status", "200",
        "--servers", "gunicorn-gthread,uvicorn", "--no-ceiling", "--levels", "4",
        "--duration", "0.5", "--repeats", "1", "--results", "r.sqlite", "--no-report",
        "--no-install",
    )  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    cells = _cells(tmp_path)
    wsgi, _ = cells["gunicorn-gthread"]
    assert wsgi.status == "unavailable" and "has no WSGI version" in wsgi.reason
    asgi, (rep,) = cells["uvicorn"]
    expect_measured(asgi)
    assert asgi.server_info["app"]["interface"] == "ASGI"
    assert rep.totals.ok > 0 and rep.totals.error_count == 0
    assert [k.name for k in rep.kinds] == ["path"]


def test_an_asgi_app_in_a_study_of_wsgi_servers_is_told_where_to_run(tmp_path: Path):
    # `quick` has WSGI servers only: an ASGI app there would measure nothing. It stops before any
    # server starts, naming the study and the servers that serve it.
    (tmp_path / "asgi_only.py").write_text(ASGI_ONLY)
    argv = cli("run", "quick", "--app", "asgi_only.py:app", "--results", "r.sqlite", "--no-report")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert last.startswith(
        "error: app asgi_only.py:app is ASGI and none of this study's servers serves ASGI:"
        " give the same options to `wsgibench run asgi`"
    ), last
    assert "uvicorn" in last.split("(the ASGI ones this machine can run: ")[1], last
    if (tmp_path / "r.sqlite").exists():  # no cell ran: nothing started
        with sqlite3.connect(tmp_path / "r.sqlite") as db:
            assert db.execute("SELECT count(*) FROM cells").fetchone() == (0,)


def test_an_app_in_a_folder_too_big_to_copy_stops_at_start(tmp_path: Path):
    # Run from a folder holding a large file (sparse here): every server start would copy it.
    (tmp_path / "asgi_only.py").write_text(ASGI_ONLY)
    with (tmp_path / "dataset.bin").open("wb") as big:
        big.truncate((1 << 30) + 1)
    argv = cli(
        "run", "quick", "--app", "asgi_only.py:app", "--servers", "uvicorn", "--no-ceiling",
        "--results", "r.sqlite", "--no-report", "--no-install",
    )  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert last.startswith(
        f"error: app asgi_only.py:app: its folder {tmp_path} holds over 1 GiB"
    ), last
    assert "put the app in a folder of its own" in last


def appdeps_python() -> str:
    from wsgibench.run.appcheck import base_python

    return base_python()
