"""Behaviour checks before measuring: judge HTTP/1.0, keep-alive and pipelining by what the server does."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from wsgibench.machine.process import Probed
from wsgibench.results.diagnose import Diagnosis
from wsgibench.run import http as _http
from wsgibench.run import tls
from wsgibench.servers import ServerRecipe
from wsgibench.study.apps import PONG_PROBE, PROBE_PATH, Probe
from wsgibench.study.loads import Load


@dataclass(frozen=True)
class Capabilities:
    pong: bool  # exact status and body on a plain HTTP/1.1 request
    http10: bool
    keep_alive: bool  # two requests answered on one HTTP/1.1 connection
    pipelining: bool  # two requests sent together, both answered in order
    detail: str  # what went wrong, if anything
    # What the server puts on the wire for the pong reply of a keep-alive request: its size in
    # bytes (status line, headers, body) and its status line with the header names.
    wire_bytes: int | None = None
    wire_head: str = ""
    # Probed only for a load that needs them (run/protocol_probe.py); None: not probed. A
    # WebSocket upgrade accepted, HTTP/2 with prior knowledge, HTTP/2 over TLS by ALPN; and
    # what the server did instead of the one that failed.
    websocket: bool | None = None
    h2c: bool | None = None
    h2: bool | None = None
    protocol_detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Conn:
    """A blocking client connection that reads whole responses, bounded by a deadline."""

    def __init__(self, host: str, port: int, timeout_s: float):
        # A server started with TLS is checked over TLS, its certificate verified.
        self.sock = tls.connect(host, port, timeout_s)
        self.deadline = time.monotonic() + timeout_s
        self.buf = b""
        self.last_raw = b""  # the bytes of the last whole response
        self.eof = False

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def response(self) -> _http.Response:
        while True:
            try:
                resp, used = _http.parse(self.buf, eof=self.eof)
                self.last_raw, self.buf = self.buf[:used], self.buf[used:]
                return resp
            except _http.IncompleteResponse:
                if self.eof:
                    raise ConnectionError("connection closed before a whole response") from None
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise (
                    _http.Unframed(what)
                    if (what := _http.unframed(self.buf))
                    else TimeoutError("no whole response in time")
                )
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue  # the deadline, judged above on what came
            self.buf += chunk
            self.eof = not chunk

    def close(self) -> None:
        self.sock.close()


def fetch(
    host: str, port: int, raw: bytes, count: int = 1, timeout_s: float = 2.0, one_write: bool = True
) -> list[_http.Response]:
    """Send `raw` (count times, in one write or one after each reply) and read count responses."""
    conn = _Conn(host, port, timeout_s)
    try:
        replies = []
        if one_write:
            conn.send(raw * count)
        for _ in range(count):
            if not one_write:
                conn.send(raw)
            replies.append(conn.response())
        return replies
    finally:
        conn.close()


def probe(
    host: str,
    port: int,
    probe: Probe = PONG_PROBE,
    timeout_s: float = 1.0,
    hint: str = "",
    settled: bool = False,
) -> Probed:
    """Readiness: one HTTP/1.1 request on the probe's path answered as the probe expects; else
    what came back instead, with `hint` after a wrong status or body (a 3xx or 4xx status, or a
    reply with no end, is final: a starting server does not change it; a proxy answers 5xx until
    its upstream is up). `settled`: every wrong answer is final (the hint says why it stays)."""
    try:
        raw = _http.request(probe.path, close=True)
        reply = fetch(host, port, raw, timeout_s=timeout_s)[0]
    except _http.Unframed as exc:  # up and answering, in a way no client can read
        return Probed(False, str(exc), final=True)
    except (OSError, _http.BadResponse, ValueError):
        return Probed(False)
    if probe.accepts(reply.status, reply.body):
        return Probed(True)
    said = f"status {reply.status}"
    if 300 <= reply.status < 400 and reply.headers.get("location"):
        said += f" to {reply.headers['location'][:80]}"  # the request one may have meant
    said += f", body {reply.body[:80]!r}" if reply.body else ""
    return Probed(False, said + hint, final=settled or 300 <= reply.status < 500)


# A server that does not pipeline leaves the second of two requests sent together unanswered:
# the pipelining check waits for it ten times the slowest earlier reply, at least this long (a
# pipelining server answers both at once), never longer than the check's own timeout.
PIPELINING_WAIT_S = 0.5


def check(host: str, port: int, probe: Probe = PONG_PROBE, timeout_s: float = 2.0) -> Capabilities:
    """HTTP/1.0, keep-alive and pipelining judged by behaviour, on the probe's request."""
    problems: list[str] = []
    path = probe.path
    slowest = 0.0  # the longest a successful attempt waited for one reply

    def attempt(label: str, raw: bytes, count: int, one_write: bool, wait_s: float) -> bool:
        nonlocal slowest
        started = time.monotonic()
        try:
            replies = fetch(host, port, raw, count, wait_s, one_write)
        except _http.Unframed as exc:
            problems.append(f"{label}: {exc}")
            return False
        except TimeoutError:
            what = "no reply" if count == 1 else f"not all {count} replies"
            problems.append(f"{label}: {what} within {wait_s:.2g} s")
            return False
        except (OSError, _http.BadResponse, ValueError) as exc:
            problems.append(f"{label}: {type(exc).__name__}: {exc}")
            return False
        if not all(probe.accepts(r.status, r.body) for r in replies):
            problems.append(f"{label}: got {[(r.status, r.body[:20]) for r in replies]}")
            return False
        slowest = max(slowest, (time.monotonic() - started) / (1 if one_write else count))
        return True

    pong = attempt("pong", _http.request(path, close=True), 1, True, timeout_s)
    http10 = attempt("http/1.0", _http.request(path, version="1.0"), 1, True, timeout_s)
    keep_alive = attempt("keep-alive", _http.request(path), 2, False, timeout_s)
    wait_s = min(timeout_s, max(PIPELINING_WAIT_S, 10 * slowest))
    pipelining = attempt("pipelining", _http.request(path), 2, True, wait_s)
    size, head = wire(host, port, path, timeout_s)
    return Capabilities(pong, http10, keep_alive, pipelining, "; ".join(problems), size, head)


def wire(
    host: str, port: int, path: str = PROBE_PATH, timeout_s: float = 2.0
) -> tuple[int | None, str]:
    """The bytes of one pong reply to a plain keep-alive HTTP/1.1 request, and its head: the
    status line and the header names (values such as dates change from reply to reply)."""
    try:
        conn = _Conn(host, port, timeout_s)
    except OSError:
        return None, ""
    try:
        conn.send(_http.request(path))
        conn.response()
    except (OSError, _http.BadResponse, ValueError):
        return None, ""
    finally:
        conn.close()
    lines = conn.last_raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    names = [line.split(":", 1)[0].strip().lower() for line in lines[1:]]
    return len(conn.last_raw), " | ".join([lines[0], ", ".join(names)])


# Markers of a server's HTTP parser among the modules on the stack of the app's call.
PARSERS = (
    ("httptools_impl", "httptools"),
    ("h11_impl", "h11"),
    ("hypercorn.protocol.h11", "h11"),
    ("hypercorn.protocol.h2", "h2"),
    ("gunicorn.asgi", "gunicorn"),
)
# A Twisted server (Daphne) runs the app on the reactor it installed: twisted.internet.<name>reactor.
TWISTED_REACTOR = "twisted.internet."
RUNTIME_PATH = "/wsgibench-runtime"


def runtime(host: str, port: int, timeout_s: float = 2.0) -> dict[str, str] | None:
    """The event loop and HTTP parser an ASGI server really runs, as its app sees them (the
    ASGI apps answer RUNTIME_PATH with their loop's class and the modules on their stack)."""
    try:
        (reply,) = fetch(host, port, _http.request(RUNTIME_PATH, close=True), timeout_s=timeout_s)
        seen = json.loads(reply.body) if reply.status == 200 else None
        # Another app's reply (a framework's JSON 404) says nothing of the runtime.
        if not isinstance(seen, dict) or "loop" not in seen or "modules" not in seen:
            return None
        return parse_runtime(seen)
    except (OSError, _http.BadResponse, ValueError):
        return None


def parse_runtime(seen: dict[str, Any]) -> dict[str, str]:
    """The loop ("uvloop" or "asyncio") and the parser, from what the app reported; and the
    Twisted reactor ("asyncio", "epoll", ...) when a Twisted server runs it."""
    loop = "uvloop" if "uvloop" in str(seen.get("loop", "")) else "asyncio"
    modules = " ".join(seen.get("modules", []))
    http = next((name for marker, name in PARSERS if marker in modules), "unknown")
    found = {"loop": loop, "http": http, "loop_class": str(seen.get("loop", ""))}
    for module in seen.get("modules", []):
        name = module.removeprefix(TWISTED_REACTOR)
        if name != module and name.endswith("reactor"):
            found["reactor"] = name.removesuffix("reactor")
            break
    return found


def asgi_runtime(
    recipe: ServerRecipe, host: str, port: int
) -> tuple[dict[str, str] | None, Diagnosis | None]:
    """What an ASGI (or native async: RSGI) server runs on, and a diagnosis when it is not what the
    recipe asked for (uvicorn without uvloop and httptools falls back to asyncio and h11, several
    times slower). The apps in those interfaces answer RUNTIME_PATH; the WSGI ones do not, nor
    do tornado's own handlers (native, with nothing to expect)."""
    if recipe.interface != "ASGI" and not recipe.expects:
        return None, None
    seen = runtime(host, port)
    wanted = dict(recipe.expects)
    if seen is None or not wanted:
        return seen, None
    wrong = [f"{k} {seen.get(k)} (not {v})" for k, v in wanted.items() if seen.get(k) != v]
    if not wrong:
        return seen, None
    return seen, Diagnosis(
        "fallback",
        f"{recipe.name} runs on {', '.join(wrong)}: a fallback, "
        "so this is not the configuration its name says",
    )


def as_supported(load: Load, caps: Capabilities) -> tuple[Load, list[Diagnosis]]:
    """The load as this server can take it. A server that silently closes keep-alive connections
    would show a wall of resets (seed 003's uWSGI): it gets a new connection per request instead,
    said beside the number; likewise pipelining is dropped for servers that do not answer it."""
    found = []
    # A WebSocket keeps its upgraded connection whatever the server does with a second request.
    if load.wants_keep_alive and not caps.keep_alive and load.protocol == "http":
        load = replace(load, keep_alive=False)
        found.append(
            Diagnosis(
                "no-keep-alive",
                "no keep-alive: the server does not answer a second request on a "
                "connection, so this was measured with a new connection per request",
            )
        )
    pipeline = load.params.get("pipeline", 1)
    if pipeline not in (1, False) and not caps.pipelining:
        load = replace(
            load, params={**load.params, "pipeline": 1 if pipeline is not True else False}
        )
        found.append(
            Diagnosis(
                "no-pipelining",
                "no pipelining: pipelined requests were not all answered, so this "
                "was measured without pipelining",
            )
        )
    return load, found
