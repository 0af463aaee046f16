"""One's own app as people lay it out and write it: a file inside a package (imported by its dotted
name, so its relative imports resolve), a reply with no Content-Length, which one server cannot
end, and a redirect at /: each said within seconds, with what came back."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .helpers import cli, expect_measured, require
from .test_own_app import _cells, quick


def test_an_app_in_a_package_without_content_length_where_uwsgi_keeps_the_reply_open(
    tmp_path: Path,
):
    # A file inside a package is imported by its dotted name from above the package, so that its
    # relative import resolves. It sets no Content-Length: waitress frames the reply itself,
    # uWSGI's --http11-socket sends it unframed and never closes the connection (even to a
    # request that says close), so no client can tell where the reply ends. That server is up
    # and will not change: the cell says so after a few seconds, not the whole start timeout.
    require("waitress", "uwsgi-http11")
    web = tmp_path / "src" / "shop" / "web"
    web.mkdir(parents=True)
    for folder in (web, web.parent):
        (folder / "__init__.py").write_text("")
    (web / "views.py").write_text("import time\ntime.sleep(0.3)\nBODY = b'shop'\n")
    (web / "app.py").write_text(
        "from .views import BODY\n"
        "def app(environ, start_response):\n"
        "    start_response('200 OK', [('Content-Type', 'text/plain')])\n"
        "    return [BODY]\n"
    )
    proc = quick(tmp_path, "src/shop/web/app.py:app", "waitress,uwsgi-http11")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    cells = _cells(tmp_path)
    cell, (rep,) = cells["waitress"]
    expect_measured(cell)
    assert rep.totals.ok > 0 and rep.totals.error_count == 0
    # Its import, timed before the first cell (each start may take that long per process).
    assert 0.3 <= cell.server_info["app"]["startup_s"] < 10, cell.server_info["app"]
    cell, reps = cells["uwsgi-http11"]
    assert cell.status == "disqualified" and reps == [], (cell.status, cell.reason)
    said = "it answered status 200 with neither Content-Length nor chunked encoding"
    assert said in cell.reason and "for 3 s" in cell.reason, cell.reason
    assert "name it with --path" not in cell.reason, cell.reason


def test_an_app_that_redirects_its_root_is_told_at_once_where_it_pointed(tmp_path: Path):
    # FastAPI apps and login-first apps often send / elsewhere: the server is up, the redirect
    # will not change, and the right request is likely where it points.
    require("waitress")
    (tmp_path / "redir.py").write_text(
        "def app(environ, start_response):\n"
        "    start_response('302 Found', [('Location', '/docs'), ('Content-Length', '0')])\n"
        "    return [b'']\n"
    )
    proc = quick(tmp_path, "redir.py:app", "waitress")
    # its one server disqualified: the run measured nothing (exit 4)
    assert proc.returncode == 4 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    cell, reps = _cells(tmp_path)["waitress"]
    assert cell.status == "disqualified" and reps == [], (cell.status, cell.reason)
    said = "it answered status 302 to /docs (your app's probe: name it with --path"
    assert said in cell.reason and "for 3 s" in cell.reason, cell.reason


LIFESPAN = """
import asyncio
MODEL = {}
async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await asyncio.sleep(0.6)  # a model loaded at start-up
                MODEL["ready"] = True
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b"ready" if MODEL.get("ready") else b"cold"
    headers = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
"""


def test_an_asgi_apps_lifespan_start_up_is_timed_before_the_first_cell(tmp_path: Path):
    # The check before the first cell runs the lifespan start-up as a server does and times it
    # with the import: a model loaded there (seconds, in apps people deploy) is allowed for at
    # every start. Every reply must come from the app after its start-up. Daphne runs no
    # lifespan: the app stays cold there, and the cell says why.
    require("uvicorn")
    require("daphne")
    (tmp_path / "life.py").write_text(LIFESPAN)
    (tmp_path / "s.toml").write_text(
        'servers = ["uvicorn", "daphne"]\napp = "life.py:app"\nrepeats = 1\n'
        '[[requests]]\nname = "r"\npath = "/"\nexpect = { status = 200, body = "ready" }\n'
        '[[load]]\nname = "c"\nmodel = "closed"\nlevels = [4]\nduration_s = 0.5\n'
    )
    argv = cli("run", "s.toml", "--results", "r.sqlite", "--no-report", "--no-install")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    cell, (rep,) = _cells(tmp_path)["uvicorn"]
    expect_measured(cell)
    assert rep.totals.ok > 0 and rep.totals.error_count == 0
    assert 0.6 <= cell.server_info["app"]["startup_s"] < 10, cell.server_info["app"]
    assert cell.server_info["app"]["lifespan"] is True
    daphne, reps = _cells(tmp_path)["daphne"]
    assert daphne.status == "disqualified" and reps[0].totals.ok == 0, daphne.reason
    # the probe asks for status 200 alone: every measured reply is then a wrong body
    said = "every one an error (bad_body"
    assert (
        said in daphne.reason
        and "(daphne runs no ASGI lifespan: the app's start-up never ran)" in daphne.reason
    ), daphne.reason


def test_ones_own_app_on_the_frameworks_study_is_measured_alone_and_named_so(tmp_path: Path):
    # The frameworks' own loads stay with the study (kept, pong's load, now one's own app, would
    # have been their ceiling), and `--servers waitress` keeps only the loads that run on it.
    require("waitress")
    (tmp_path / "svc.py").write_text(
        "def app(environ, start_response):\n"
        "    start_response('200 OK', [('Content-Length', '2')])\n"
        "    return [b'ok']\n"
    )
    argv = cli(
        "run", "frameworks", "--app", "svc.py:app", "--servers", "waitress", "--duration", "0.5",
        "--repeats", "1", "--results", "r.sqlite", "--no-report", "--no-install",
    )  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said[-3000:]
    assert "(left out, loads on none of them: fastapi, starlette, litestar)" in said
    assert "(left out, loads of apps of their own: flask, django, falcon)" in said
    ((cell, reps),) = _cells(tmp_path).values()
    assert (cell.load, cell.server) == ("app", "waitress")
    expect_measured(cell)
    assert reps[0].totals.responses > 0 and reps[0].totals.error_count == 0


def test_an_app_that_is_a_module_of_an_installed_package(tmp_path: Path):
    # No file of the app in the working directory: its module comes with what it installs (here
    # the standard library's demo app, beside a requirement), imported by every server from there.
    require("waitress")
    (tmp_path / "req.txt").write_text("humanize==4.12.3\n")
    proc = quick(tmp_path, "wsgiref.simple_server:demo_app", "waitress")
    assert proc.returncode != 0 and "name it in requirements" in proc.stderr, proc.stderr[-2000:]
    proc = quick(
        tmp_path, "wsgiref.simple_server:demo_app", "waitress", "--requirements", "req.txt"
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    cell, (rep,) = _cells(tmp_path)["waitress"]
    expect_measured(cell)
    assert rep.totals.ok > 0 and rep.totals.error_count == 0


def test_one_server_checked_on_ones_own_app(tmp_path: Path):
    # `check SERVER --app APP`: one server's behaviour checks on one's own app, made ready as a
    # run makes it; what the server does with the app's replies (no Content-Length here) is said.
    for name in ("uwsgi-http11", "waitress"):
        require(name)
    (tmp_path / "myapp.py").write_text(
        "def app(environ, start_response):\n"
        "    start_response('200 OK', [('Content-Type', 'text/plain')])\n"
        "    yield b'ok'\n"
    )

    def check(*args: str) -> subprocess.CompletedProcess:
        argv = cli("check", *args)
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)

    proc = check("uwsgi-http11", "--app", "myapp:app")
    assert proc.returncode != 0 and "neither Content-Length nor chunked" in proc.stderr, proc.stderr
    proc = check("waitress", "--app", "myapp:app", "--path", "/")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "app myapp:app: the probe wants a status 200 reply on /" in proc.stdout
    # waitress frames such a reply chunked but closes the connection after it (Connection: close)
    assert "http10: True" in proc.stdout and "keep_alive: False" in proc.stdout, proc.stdout
    (tmp_path / "envapp.py").write_text(  # a setting it needs, given as a run gives it
        "import os\n"
        "def app(environ, start_response):\n"
        "    ok = os.environ.get('MODE') == 'prod'\n"
        "    start_response('200 OK' if ok else '500 Error', [('Content-Length', '2')])\n"
        "    return [b'ok' if ok else b'no']\n"
    )
    proc = check("waitress", "--app", "envapp:app", "--app-env", "MODE=prod")
    assert proc.returncode == 0 and "keep_alive: True" in proc.stdout, proc.stderr[-2000:]
    proc = check("uvicorn", "--app", "myapp:app")
    assert proc.returncode == 2 and "uvicorn cannot serve app myapp:app: an ASGI server" in (
        proc.stderr
    )
