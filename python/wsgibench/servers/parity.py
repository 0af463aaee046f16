"""The recipes' settings that a comparison must hold equal or declare: what each server runs with
(loop, parser, concurrency, keep-alive, backlog, access log), audited against its documentation for
production use (study/parity.py checks that a study's servers differ only where it says)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from wsgibench.servers import fronts, versions

SETTINGS = ("loop", "parser", "concurrency", "keep_alive", "backlog", "access_log")
# Most audited recipes take the study's backlog; none logs requests unless the study asks, and
# only some can when it does (`logs_when_asked`).
STUDY_BACKLOG = "the study's"
KEEP = "on, no request limit"
_SOMAXCONN = "the study's, capped at net.core.somaxconn"


@dataclass(frozen=True)
class Audit:
    """A recipe's settings as it starts its server, and how they stand against the server's own
    documentation for production use (`production`)."""

    loop: str
    parser: str
    concurrency: str
    production: str
    keep_alive: str = KEEP
    backlog: str = STUDY_BACKLOG
    # The study's access_log = true reaches it (gunicorn's --access-logfile, Daphne's
    # --access-log); the others log nothing whatever the study says.
    logs_when_asked: bool = False

    def value(self, setting: str, access_log: bool = False) -> str:
        """The setting as the server runs in a study (whose `access_log` is given)."""
        if setting == "access_log":
            return "on" if access_log and self.logs_when_asked else "off"
        found: str = getattr(self, setting)
        return found


def _uwsgi(loop: str, parser: str, concurrency: str, production: str, keep_alive: str) -> Audit:
    """uWSGI refuses a listen backlog above net.core.somaxconn: the recipes cap the study's."""
    return Audit(loop, parser, concurrency, production, keep_alive, _SOMAXCONN)


_GRANIAN = (
    "Granian's docs: --workers per core, --blocking-threads for WSGI, --runtime-mode; access log "
    "off by default; --loop auto picks uvloop when installed (it is not: asyncio named)"
)
AUDITS: dict[str, Audit] = {
    "uvicorn": Audit(
        "uvloop",
        "httptools",
        "asyncio tasks, one thread per worker",
        "uvicorn's deployment docs: --loop/--http auto take uvloop and httptools when installed "
        "(named here); --no-access-log for speed; --timeout-keep-alive raised from 5 s to 75 s",
    ),
    "uvicorn-h11": Audit(
        "asyncio",
        "h11",
        "asyncio tasks, one thread per worker",
        "uvicorn without its extras: what it falls back to; otherwise as uvicorn",
    ),
    "gunicorn-uvicorn": Audit(
        "uvloop",
        "httptools",
        "asyncio tasks, one thread per worker",
        "gunicorn's docs for ASGI: -k uvicorn.workers.UvicornWorker; no access log (its default)",
        logs_when_asked=True,
    ),
    "gunicorn-asgi": Audit(
        "asyncio",
        "gunicorn's own",
        "asyncio tasks, one thread per worker",
        "gunicorn 24's ASGI worker (-k asgi): its own parser on asyncio; no access log (default)",
        logs_when_asked=True,
    ),
    "hypercorn": Audit(
        "asyncio",
        "h11",
        "asyncio tasks, one process",
        "Hypercorn's docs: --worker-class asyncio (default) or uvloop; keep_alive_max_requests "
        "(1,000 by default) raised here, hypercorn-ka-limit keeps it",
    ),
    "hypercorn-uvloop": Audit(
        "uvloop",
        "h11",
        "asyncio tasks, one process",
        "Hypercorn's --worker-class uvloop; otherwise as hypercorn",
    ),
    "daphne": Audit(
        "asyncio",
        "Twisted's",
        "Twisted reactor on asyncio, one process",
        "Daphne's docs: run behind a process manager; --verbosity 0 (no access log), the backlog "
        "in the endpoint string",
        logs_when_asked=True,
    ),
    "socketify-asgi": Audit(
        "asyncio",
        "uWebSockets (C++)",
        "native event loop driving asyncio, worker processes",
        "socketify's docs: --workers; the listen backlog is uSockets' own (512), not settable",
        backlog="fixed by uSockets (512)",
    ),
    "granian-asgi": Audit(
        "asyncio",
        "hyper (Rust)",
        "tokio runtime threads + the asyncio loop, worker processes",
        _GRANIAN,
    ),
    "granian-rsgi": Audit(
        "asyncio",
        "hyper (Rust)",
        "tokio runtime threads + the asyncio loop, worker processes",
        _GRANIAN,
    ),
    "granian": Audit(
        "none (WSGI)",
        "hyper (Rust)",
        "tokio runtime threads + blocking threads, worker processes",
        _GRANIAN,
    ),
    "bjoern": Audit(
        "none (WSGI)",
        "http-parser (C)",
        "one request at a time, one thread per process",
        "bjoern's README: bjoern.run on a socket; the launcher makes the socket (backlog, "
        "TCP_NODELAY); it logs nothing",
    ),
    "gunicorn-gthread": Audit(
        "none (WSGI)",
        "gunicorn's own",
        "thread pool per worker (the study's threads)",
        "gunicorn's docs: --threads with the gthread worker; --keep-alive 2 s by default; no "
        "access log (its default)",
        logs_when_asked=True,
    ),
    "cheroot": Audit(
        "none (WSGI)",
        "cheroot (Python)",
        "thread pool (the study's threads, else 10)",
        "cheroot's docs: numthreads sized to the load; request_queue_size (5 by default) set "
        "to the study's backlog; it logs no requests",
    ),
    "cherrypy": Audit(
        "none (WSGI)",
        "cheroot (Python)",
        "thread pool (the study's threads, else 10)",
        "CherryPy's docs: environment 'production' (no autoreload, no screen or access log); "
        "server.socket_queue_size set to the study's backlog",
    ),
    "paste": Audit(
        "none (WSGI)",
        "http.server (Python)",
        "thread pool (the study's threads, else 10)",
        "Paste's httpserver: use_threadpool; protocol_version HTTP/1.1 for keep-alive (HTTP/1.0 "
        "by default); request_queue_size set to the study's backlog",
    ),
    "waitress": Audit(
        "none (WSGI)",
        "waitress (Python)",
        "one I/O thread + a thread pool (the study's, else 4)",
        "waitress's docs: threads and backlog (1024 by default) as the load needs; it logs no "
        "requests by itself",
    ),
    "werkzeug": Audit(
        "none (WSGI)",
        "http.server (Python)",
        "a thread per connection",
        "Werkzeug's docs: a development server, not for production; kept as the seeds ran it",
        keep_alive="off: Connection: close on every reply",
    ),
    "wsgiref": Audit(
        "none (WSGI)",
        "http.server (Python)",
        "one request at a time",
        "the standard library's reference server, not for production; kept as the seeds ran it",
        keep_alive="off: HTTP/1.0, every connection closed",
    ),
    "eventlet-wsgi": Audit(
        "eventlet hub",
        "eventlet.wsgi (Python)",
        "a green thread per connection",
        "eventlet's docs: monkey_patch() first; max_size raised to 10,000; log_output=False",
    ),
    "gevent-pywsgi": Audit(
        "gevent (libev)",
        "gevent.pywsgi (Python)",
        "a greenlet per connection",
        "gevent's docs: patch_all() first; log=None; TCP_NODELAY set (pywsgi never sets it)",
    ),
    "gevent-pywsgi-nospawn": Audit(
        "gevent (libev)",
        "gevent.pywsgi (Python)",
        "the handler in the accept callback",
        "seed 000's spawn=None, which gevent 1.0 changed: kept to show what it does now",
        keep_alive="ends once no request is waiting",
    ),
    "gevent-pywsgi-pool1": Audit(
        "gevent (libev)",
        "gevent.pywsgi (Python)",
        "one connection at a time (Pool(1))",
        "what spawn=None meant before gevent 1.0, as seed 000 ran it",
    ),
    "gunicorn-sync": Audit(
        "none (WSGI)",
        "gunicorn's own",
        "one request at a time per worker",
        "gunicorn's docs: the sync worker is meant behind a buffering proxy; no access log",
        keep_alive="off: the sync worker closes every connection",
        logs_when_asked=True,
    ),
    "gunicorn-gevent": Audit(
        "gevent (libev)",
        "gunicorn's own",
        "a greenlet per connection, per worker",
        "gunicorn's docs: -k gevent for many connections; no access log (its default)",
        logs_when_asked=True,
    ),
    "gunicorn-eventlet": Audit(
        "eventlet hub",
        "gunicorn's own",
        "a green thread per connection, per worker",
        "gunicorn 25's -k eventlet (removed in 26); no access log (its default)",
        logs_when_asked=True,
    ),
    "gunicorn-3w-nginx": Audit(
        "none (WSGI)",
        "nginx in front, gunicorn's own behind",
        "one request at a time per worker",
        "gunicorn's docs: sync workers behind nginx, as seed 000 ran them; no access log",
        keep_alive="nginx to the client; a new upstream connection per request",
        logs_when_asked=True,
    ),
    "hypercorn-ka-limit": Audit(
        "asyncio",
        "h11",
        "asyncio tasks, one process",
        "Hypercorn at its default keep_alive_max_requests (1,000), to show what it costs",
        keep_alive="on, 1,000 requests per connection",
    ),
    "meinheld": Audit(
        "picoev",
        "picohttpparser (C)",
        "one request at a time, one process",
        "meinheld's docs: set_keepalive for keep-alive (off by default), access log off, "
        "set_backlog",
    ),
    "meinheld-site-example": Audit(
        "picoev",
        "picohttpparser (C)",
        "one request at a time, one process",
        "meinheld's site example as seed 004 ran it",
        keep_alive="off (its default)",
    ),
    "mod-wsgi": Audit(
        "none (WSGI)",
        "Apache in front",
        "daemon process threads (the study's, else 5)",
        "mod_wsgi-express: daemon mode under the event MPM; server and daemon backlogs passed; "
        "no access log",
    ),
    "fastwsgi": Audit(
        "none (WSGI)",
        "llhttp (C)",
        "one libuv loop thread per worker",
        "fastwsgi's README: run(app, host, port); tcp_nodelay turned on (off by default)",
    ),
    "fastpysgi": Audit(
        "none (WSGI)",
        "llhttp (C)",
        "one libuv loop thread per worker",
        "fastpysgi's README: tcp_nodelay turned on (off by default); no access log at its "
        "default level",
    ),
    "socketify": Audit(
        "none (WSGI)",
        "uWebSockets (C++)",
        "the app on the native loop thread, worker processes",
        "socketify's docs: --workers; the backlog is uSockets' own (512), not settable",
        backlog="fixed by uSockets (512)",
    ),
    "tornado-wsgi": Audit(
        "asyncio (tornado IOLoop)",
        "tornado (Python)",
        "the app on the IOLoop thread",
        "Tornado's docs: WSGIContainer blocks the IOLoop, for compatibility only; access log off",
    ),
    "tornado-native-sync": Audit(
        "asyncio (tornado IOLoop)",
        "tornado (Python)",
        "handlers on the IOLoop, a blocking wait",
        "seed 001's synchronous handler, as it ran it",
    ),
    "tornado-native-async": Audit(
        "asyncio (tornado IOLoop)",
        "tornado (Python)",
        "handlers on the IOLoop, an awaited wait",
        "Tornado's docs: coroutine handlers; the IOLoop keeps serving while one waits",
    ),
    "twisted-wsgi": Audit(
        "Twisted reactor",
        "Twisted's",
        "the reactor's thread pool (10 threads)",
        "Twisted's WSGIResource on the reactor pool; own launcher (twistd's Site logs every "
        "request); the launcher makes the socket (backlog, TCP_NODELAY)",
    ),
    "uwsgi-http": _uwsgi(
        "none (WSGI)",
        "uWSGI's HTTP router (C) in front",
        "worker processes (x the study's threads)",
        "uWSGI's docs: --http starts a router without keep-alive; seed 003's trap, kept as such",
        keep_alive="off: the router closes every connection",
    ),
    "uwsgi-http-keepalive": _uwsgi(
        "none (WSGI)",
        "uWSGI's HTTP router (C) in front",
        "worker processes (x the study's threads)",
        "uWSGI's docs: --http-keepalive on the router",
        keep_alive="on, no pipelining",
    ),
    "uwsgi-http11": _uwsgi(
        "none (WSGI)",
        "uWSGI (C)",
        "worker processes (x the study's threads)",
        "uWSGI's docs: --http11-socket for HTTP/1.1 in the workers; --disable-logging",
        keep_alive="on, no pipelining",
    ),
    "uwsgi-http11-base": _uwsgi(
        "none (WSGI)",
        "uWSGI (C)",
        "worker processes only, no threads",
        "seed 003's uWSGIbase as it ran it",
        keep_alive="on, no pipelining",
    ),
    "uwsgi-nginx": _uwsgi(
        "none (WSGI)",
        "nginx in front, the uwsgi protocol behind",
        "worker processes (x the study's threads)",
        "uWSGI's docs: behind nginx through uwsgi_pass, as seed 000 ran it",
        keep_alive="nginx to the client; a new uwsgi connection per request",
    ),
}


def audited(name: str) -> Audit | None:
    """A server's audit (a server at a release is audited as its catalog entry; behind nginx, as
    its entry with nginx holding the connections)."""
    found = AUDITS.get(versions.split(name)[0])
    if found is None or not fronts.split(name)[1]:
        return found
    return replace(
        found,
        keep_alive=f"{found.keep_alive}; nginx holds the client's, upstream keep-alive behind",
        production=f"{found.production}; behind nginx as its deployment docs show (servers/fronts.py)",
    )


def audit_markdown() -> str:
    """docs/parity.md: every audited recipe's settings and its note against its documentation."""
    head = "| server | " + " | ".join(SETTINGS) + " | against its documentation |"
    rows = [
        f"| `{name}` | "
        + " | ".join(a.value(s) for s in SETTINGS[:-1])
        + f" | {'off; on when the study asks' if a.logs_when_asked else 'off, always'}"
        + f" | {a.production} |"
        for name, a in sorted(AUDITS.items())
    ]
    return "\n".join(
        [
            "# Recipe parity",
            "",
            "What each server runs with, as its recipe starts it, audited against the server's own",
            "documentation for production use (`servers/parity.py`; this file is written from it).",
            "A study's servers may differ in a setting only where the study's `parity` table says",
            "why (`tests/unit/servers/test_parity.py` checks every built-in study). The nginx",
            "ceiling, the non-Python reference and the servers that cannot run here are compared",
            "in nothing.",
            "",
            head,
            "|---" * (len(SETTINGS) + 2) + "|",
            *rows,
            "",
        ]
    )
