"""The apps a study can serve: module, default request mix and how each response is validated."""

from __future__ import annotations

import difflib

from wsgibench.errors import UsageError
from wsgibench.study.appspec import PONG_PROBE, PROBE_BODY, PROBE_PATH, AppSpec, Probe
from wsgibench.study.frameworks import FRAMEWORKS
from wsgibench.study.loads import RequestKind

__all__ = ["APPS", "PONG_PROBE", "PROBE_BODY", "PROBE_PATH", "AppSpec", "Probe", "get_app"]

_PONG = RequestKind()
_SLEEP = RequestKind(name="sleep", path="/", expect={"status": 200, "body": "Slept"})
# The db app sums 100 values uniform in [0, 1): mean 50, standard deviation sqrt(100/12) = 2.9.
# 30..70 is about 6.9 standard deviations either side (a correct app leaves it with probability
# ~1e-11 per request), while an empty result (0), a single row or a wrong column falls outside.
_DB = RequestKind(name="db", path="/", expect={"status": 200, "body_float": {"min": 30, "max": 70}})

APPS: dict[str, AppSpec] = {
    spec.name: spec
    for spec in (
        AppSpec(
            "pong",
            "seed 000: `Pong!`, text/plain, Content-Length",
            (_PONG,),
            asgi_module="asgi_pong",
            native_modules={"RSGI": "rsgi_pong"},
        ),
        AppSpec(
            "pong_slow", "pong after 3 ms of CPU: a known slowdown, for compare's tests", (_PONG,)
        ),
        AppSpec(
            "sleep",
            "seed 001: time.sleep(WSGIBENCH_SLEEP_S, default 1 s), then `Slept` (ASGI: an awaited "
            "asyncio.sleep, or time.sleep with WSGIBENCH_SLEEP_BLOCKING=1)",
            (_SLEEP,),
            {"WSGIBENCH_SLEEP_S": "1"},
            asgi_module="asgi_sleep",
        ),
        AppSpec(
            "mixed",
            "seed 001's head-of-line study: /slow sleeps, /fast is pong",
            (
                RequestKind(name="slow", path="/slow", expect={"status": 200, "body": "Slept"}),
                RequestKind(name="fast", path="/fast"),
            ),
            {"WSGIBENCH_SLEEP_S": "1"},
            module="sleep",
            asgi_module="asgi_sleep",
        ),
        AppSpec(
            "db",
            "seed 002: 10 x SELECT ... LIMIT 10 on 1M rows, the sum as '%6f' "
            "(SQLite, PostgreSQL or MariaDB: a [[load]]'s `database`; ASGI: async drivers, a pool)",
            (_DB,),
            {"WSGIBENCH_DB_KIND": "sqlite"},
            database="sqlite",
            asgi_module="asgi_db",
        ),
        AppSpec(
            "ws_echo",
            "WebSocket echo (ASGI only): /ws sends every message back as it came; any HTTP "
            "request is `Pong!`",
            (RequestKind(name="echo", path="/ws"),),
            wsgi=False,
            asgi_module="asgi_ws_echo",
        ),
        AppSpec(
            "ws_broadcast",
            "WebSocket broadcast (ASGI only), an in-process hub per worker: a message from one "
            "connection goes to every other; any HTTP request is `Pong!`",
            (RequestKind(name="subscribe", path="/ws/broadcast"),),
            wsgi=False,
            asgi_module="asgi_ws_broadcast",
        ),
    )
}
APPS.update((spec.name, spec) for spec in FRAMEWORKS)


def get_app(name: str) -> AppSpec:
    if name in APPS:
        return APPS[name]
    near = difflib.get_close_matches(name, APPS, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else f"; apps: {', '.join(sorted(APPS))}"
    raise UsageError(f"unknown app {name!r}{hint}")
