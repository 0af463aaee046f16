"""The recipes' settings that a comparison must hold equal or declare: what each server runs with
(loop, parser, concurrency, keep-alive, backlog, access log), audited against its documentation for
production use, and the check that a study's servers differ only where its `parity` table says."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wsgibench.baseline import BASELINE
from wsgibench.servers import get, versions
from wsgibench.servers.recipe import Flavour

SETTINGS = ("loop", "parser", "concurrency", "keep_alive", "backlog", "access_log")
# Every audited recipe takes the study's backlog and logs no request unless the study asks.
STUDY_BACKLOG = "the study's"
NO_LOG = "off unless the study asks"
KEEP = "on, no request limit"


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
    access_log: str = NO_LOG

    def value(self, setting: str) -> str:
        found: str = getattr(self, setting)
        return found


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
    ),
    "gunicorn-asgi": Audit(
        "asyncio",
        "gunicorn's own",
        "asyncio tasks, one thread per worker",
        "gunicorn 24's ASGI worker (-k asgi): its own parser on asyncio; no access log (default)",
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
    ),
}


def audited(name: str) -> Audit | None:
    """A server's audit (a server at a release is audited as its catalog entry)."""
    return AUDITS.get(versions.split(name)[0])


def compared(servers: list[str]) -> list[str]:
    """The servers a study compares: not the nginx ceiling, nor a non-Python reference."""
    return [s for s in servers if s != BASELINE and get(s).flavour != Flavour.REFERENCE]


def undeclared(servers: list[str], declared: dict[str, Any]) -> list[str]:
    """Each setting in which two of the compared servers differ and the study does not declare,
    said with the values; a server not audited is said too (nothing can be checked for it)."""
    names = compared(servers)
    out = [f"{s}: not audited (servers/parity.py)" for s in names if audited(s) is None]
    audits = {s: a for s in names if (a := audited(s)) is not None}
    for setting in SETTINGS:
        values = {s: a.value(setting) for s, a in audits.items()}
        if len(set(values.values())) > 1 and setting not in declared:
            shown = ", ".join(f"{s}: {v}" for s, v in values.items())
            out.append(f"{setting} differs ({shown}) and the study does not declare it")
    out += [f"parity names {k!r}, not a setting ({', '.join(SETTINGS)})" for k in declared
            if k not in SETTINGS]  # fmt: skip
    return out
