"""What an app is to a study: its module and callable in each interface, its folder, its own
dependencies, its default request mix and the probe that says a server serving it is up."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from wsgibench.paths import APPS_DIR
from wsgibench.study.loads import RequestKind

# Every built-in app answers this path with exactly "Pong!": readiness and behaviour checks use
# it, so they judge the server the same way whatever the app does on its other paths.
PROBE_PATH = "/ping"
PROBE_BODY = b"Pong!"


@dataclass(frozen=True)
class Probe:
    """The request that says a server is up and behaves (HTTP/1.0, keep-alive, pipelining): its
    path, the status of a valid reply and, when given, its exact body."""

    path: str = PROBE_PATH
    status: int = 200
    body: bytes | None = PROBE_BODY

    def accepts(self, status: int, body: bytes) -> bool:
        return status == self.status and (self.body is None or body == self.body)

    def describe(self) -> str:
        what = f"exact {self.body!r}" if self.body is not None else f"status {self.status}"
        return f"{what} reply on {self.path}"


PONG_PROBE = Probe()


@dataclass(frozen=True)
class AppSpec:
    name: str
    summary: str
    requests: tuple[RequestKind, ...]
    env: dict[str, str] = field(default_factory=dict)  # defaults of the app's WSGIBENCH_* settings
    module: str = ""  # module in the app's folder exposing the callable; the app's name when empty
    database: str | None = None  # the database a load gets when it names none (see _databases)
    # The same app for ASGI servers: same paths, status, headers and bodies (None: WSGI only).
    asgi_module: str | None = None
    # Its versions in servers' own interfaces, by the recipe's native_api ({"RSGI": "rsgi_pong"}).
    native_modules: dict[str, str] = field(default_factory=dict)
    # The callable's name in `module` (WSGI, or ASGI for an ASGI-only app) and in `asgi_module`.
    callable: str = "app"
    asgi_callable: str = "app"
    # None for an app whose module alone does not say (a user's app before it is imported):
    # run.appcheck reads it from the callable and fills module and asgi_module in.
    wsgi: bool = True
    # The folder put first on the server's path (copied into each server's scratch dir).
    folder: Path = APPS_DIR
    # The working directory the server runs in (None: the app's copied folder).
    workdir: Path | None = None
    # Its own dependencies (requirements.txt or pyproject.toml), installed apart from the
    # servers' venvs (machine/appdeps.py), and the lock they are installed from when it ships one.
    requirements: Path | None = None
    lock: Path | None = None
    probe: Probe = PONG_PROBE
    # A user's app: the spec as written ("myapp:app"), its interface still to be read.
    spec: str = ""
    interface: str = ""  # "wsgi" | "asgi" as the study says; "" detects it
    # How long it took to be ready in the check before the first cell (its import, its factory's
    # call, its ASGI lifespan start-up): a server's start may take that long per process that
    # loads it (run/serve.py).
    startup_s: float = 0.0
    # One's own ASGI side completed a lifespan start-up in that check: a server that runs none
    # (Daphne) serves it without what the start-up sets up.
    lifespan: bool = False

    @property
    def module_name(self) -> str:
        return self.module or self.name

    @property
    def shown(self) -> str:
        """The app as its user named it (`src/shop/app.py:app`), a built-in by its name."""
        return self.spec or self.name

    def module_for(self, interface: str, native_api: str = "") -> str | None:
        """The app's module in this interface, or None when it has no such version."""
        if interface == "ASGI":
            return self.asgi_module
        if interface == "native":
            return self.native_modules.get(native_api)
        return self.module_name if self.wsgi else None

    def callable_for(self, interface: str) -> str:
        """The name of the callable in the module of this interface."""
        return self.asgi_callable if interface == "ASGI" else self.callable
