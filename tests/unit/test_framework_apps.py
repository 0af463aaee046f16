"""The framework apps' shared rows and their self-check: the check passes a right app and names the
first wrong reply of a wrong one. The framework apps themselves are run by the frameworks study
on real servers (tests/e2e/test_frameworks.py), where the engine validates every reply."""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest

FRAMEWORKS = Path(__file__).resolve().parents[2] / "python" / "wsgibench" / "apps" / "frameworks"
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], list[bytes]]


@pytest.fixture
def apps_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FRAMEWORKS))  # as servers import them: the folder on sys.path


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _served(app: WSGIApp) -> Iterator[str]:
    """app on wsgiref in a thread; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _reference(broken: dict[str, tuple[str, str, bytes]] | None = None) -> WSGIApp:
    """A raw WSGI app answering like the framework apps; `broken` replaces some paths' replies."""
    rows = [{"id": i, "randomNumber": (i * 7919) % 10_000 + 1} for i in range(1001, 1021)]
    replies = {
        "/ping": ("200 OK", "text/plain", b"Pong!"),
        "/plaintext": ("200 OK", "text/plain; charset=utf-8", b"Hello, World!"),
        "/json": ("200 OK", "application/json", b'{"message": "Hello, World!"}'),
        "/db": ("200 OK", "application/json", json.dumps({"rows": rows}).encode()),
        **(broken or {}),
    }

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        path = environ["PATH_INFO"]
        if path in replies:
            status, ctype, body = replies[path]
        elif path == "/echo":
            size = int(environ.get("CONTENT_LENGTH") or 0)
            status, ctype = "200 OK", "application/octet-stream"
            body = environ["wsgi.input"].read(size)
        else:
            status, ctype, body = "404 Not Found", "text/plain", b"Not Found"
        start_response(status, [("Content-Type", ctype), ("Content-Length", str(len(body)))])
        return [body]

    return app


def test_rows_are_the_twenty_stated_rows(apps_path: None) -> None:
    fwdata = _module("fwdata")
    rows = fwdata.rows()
    assert [row["id"] for row in rows] == list(range(1001, 1021))
    assert rows[0] == {"id": 1001, "randomNumber": 6920}  # (1001 * 7919) % 10000 + 1
    assert all(row["randomNumber"] == (row["id"] * 7919) % 10_000 + 1 for row in rows)
    assert fwdata.rows() == rows and fwdata.rows() is not rows  # a fresh list each call


def test_each_thread_its_own_connection_to_one_database(apps_path: None) -> None:
    fwdata = _module("fwdata")
    fwdata.rows()
    made = fwdata._keeper
    seen: list[object] = []

    def other_thread() -> None:
        assert len(fwdata.rows()) == 20
        seen.append(fwdata._local.conn)
        seen.append(fwdata._local.conn.execute("SELECT count(*) FROM world").fetchone())

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert len(seen) == 2 and seen[0] is not fwdata._local.conn
    assert seen[1] == (10_000,)
    assert fwdata._keeper is made  # filled once: a new thread only connects


def test_the_self_check_passes_a_right_app(apps_path: None) -> None:
    selfcheck = _module("selfcheck")
    with _served(_reference()) as base:
        assert selfcheck.check(base) is None
        assert selfcheck.main([base]) == 0
    assert selfcheck.main([]) == 2


WRONG_ROWS = json.dumps({"rows": [{"id": 1001, "randomNumber": 6920}]}).encode()


@pytest.mark.parametrize(
    ("broken", "named"),
    [
        ({"/ping": ("200 OK", "text/plain", b"Pong")}, "GET /ping: body b'Pong'"),
        ({"/plaintext": ("500 Oops", "text/plain", b"")}, "GET /plaintext: status 500"),
        (
            {"/json": ("200 OK", "text/html", b'{"message": "Hello, World!"}')},
            "GET /json: Content-Type text/html, want application/json",
        ),
        ({"/db": ("200 OK", "application/json", WRONG_ROWS)}, "GET /db: body"),
        ({"/echo": ("200 OK", "application/octet-stream", b"x")}, "POST /echo: body b'x'"),
        ({"/no-such-path": ("200 OK", "text/plain", b"")}, "GET /no-such-path: status 200"),
    ],
)
def test_the_self_check_names_the_first_wrong_reply(
    apps_path: None, broken: dict[str, tuple[str, str, bytes]], named: str
) -> None:
    selfcheck = _module("selfcheck")
    with _served(_reference(broken)) as base:
        assert (selfcheck.check(base) or "").startswith(named)
        assert selfcheck.main([base]) == 1


def test_the_self_check_names_a_silent_server(apps_path: None) -> None:
    selfcheck = _module("selfcheck")
    with _served(_reference()) as base:
        pass  # closed: nothing listens there now
    assert (selfcheck.check(base, timeout=2) or "").startswith("GET /ping: no reply")
