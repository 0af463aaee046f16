"""The apps a study can serve: module, default request mix and how each response is validated."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from ._errors import UsageError
from ._loads import RequestKind

# Every app answers this path with exactly "Pong!": readiness and behaviour checks use it, so
# they judge the server the same way whatever the app does on its other paths.
PROBE_PATH = "/ping"
PROBE_BODY = b"Pong!"


@dataclass(frozen=True)
class AppSpec:
    name: str  # module name in apps/
    summary: str
    requests: tuple[RequestKind, ...]
    env: dict[str, str] = field(default_factory=dict)  # defaults of the app's WSGIBENCH_* settings


_PONG = RequestKind()
_SLEEP = RequestKind(name="sleep", path="/", expect={"status": 200, "body": "Slept"})

APPS: dict[str, AppSpec] = {
    spec.name: spec for spec in (
        AppSpec("pong", "seed 000: `Pong!`, text/plain, Content-Length", (_PONG,)),
        AppSpec("pong_slow", "pong after 3 ms of CPU: a known slowdown, for compare's tests",
                (_PONG,)),
        AppSpec("sleep", "seed 001: time.sleep(WSGIBENCH_SLEEP_S, default 1 s), then `Slept`",
                (_SLEEP,), {"WSGIBENCH_SLEEP_S": "1"}),
        AppSpec("mixed", "seed 001's head-of-line study: /slow sleeps, /fast is pong",
                (RequestKind(name="slow", path="/slow", expect={"status": 200, "body": "Slept"}),
                 RequestKind(name="fast", path="/fast")),
                {"WSGIBENCH_SLEEP_S": "1"}),
    )
}


def get_app(name: str) -> AppSpec:
    if name in APPS:
        return APPS[name]
    near = difflib.get_close_matches(name, APPS, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else f"; apps: {', '.join(sorted(APPS))}"
    raise UsageError(f"unknown app {name!r}{hint}")
