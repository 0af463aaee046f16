"""uvicorn: the ASGI server most used, on uvloop and httptools, and on asyncio and h11 (what it
silently falls back to when those two are missing)."""

from collections.abc import Callable

from wsgibench.servers.recipe import (
    Command,
    Flavour,
    Interface,
    LaunchContext,
    PythonEnv,
    ServerRecipe,
)

ENV = PythonEnv(
    "uvicorn", ("uvicorn==0.54.0", "uvloop==0.23.0", "httptools==0.9.0", "websockets==15.0.1")
)
_HANDLES = (
    "--no-access-log: uvicorn logs every request by default",
    "--no-server-header --no-date-header: the same bytes as the WSGI servers' replies",
    "--backlog passed (default 2048)",
    "loop and parser read back from the running server; a fallback is flagged",
)


def _launch(loop: str, http: str) -> Callable[[LaunchContext], list[Command]]:
    def launch(ctx: LaunchContext) -> list[Command]:
        argv = [
            str(ctx.python),
            "-m",
            "uvicorn",
            ctx.app_ref,
            "--app-dir",
            str(ctx.app_dir),
            "--host",
            ctx.host,
            "--port",
            str(ctx.port),
            "--workers",
            str(ctx.workers),
            "--backlog",
            str(ctx.backlog),
            "--loop",
            loop,
            "--http",
            http,
            # "auto", uvicorn's default: an app without lifespan support (Django's ASGI
            # handler) is served, where "on" would make uvicorn exit at startup.
            "--lifespan",
            "auto",
            "--no-access-log",
            "--log-level",
            "warning",
            "--no-server-header",
            "--no-date-header",
            "--timeout-keep-alive",
            "75",
        ]
        return [Command(argv)]

    return launch


# TLS: uvicorn's own --ssl-* options (ALPN: HTTP/1.1 only).
_TLS = ("--ssl-certfile", "{cert}", "--ssl-keyfile", "{key}")

RECIPES = [
    ServerRecipe(
        name="uvicorn",
        tls_args=_TLS,
        project="uvicorn",
        flavour=Flavour.CALLBACK,
        interface=Interface.ASGI,
        env=ENV,
        version_of="uvicorn",
        # uvicorn's defaults, as users run it: "auto" takes uvloop and httptools when they are
        # installed and falls back to asyncio and h11 without a word; read back and flagged.
        launch=_launch("auto", "auto"),
        expects=(("loop", "uvloop"), ("http", "httptools")),
        handles=_HANDLES,
        summary="ASGI on uvloop + httptools, worker processes",
    ),
    ServerRecipe(
        name="uvicorn-h11",
        tls_args=_TLS,
        project="uvicorn",
        flavour=Flavour.CALLBACK,
        interface=Interface.ASGI,
        env=ENV,
        version_of="uvicorn",
        launch=_launch("asyncio", "h11"),
        expects=(("loop", "asyncio"), ("http", "h11")),
        handles=_HANDLES,
        summary="ASGI on asyncio + h11 (pure Python), what uvicorn falls back to",
    ),
]
