"""Granian: a Rust (hyper/tokio) HTTP server calling the WSGI app through its blocking threads, an
ASGI app on an asyncio loop, or an app in RSGI, its own interface (and its default)."""

from wsgibench.servers.recipe import (
    Command,
    Flavour,
    Interface,
    LaunchContext,
    PythonEnv,
    ServerRecipe,
)

ENV = PythonEnv("granian", ("granian==2.8.7",))
# --runtime-mode: one Rust runtime thread per worker (st), or a multi-threaded runtime (mt).
MODES = ("st", "mt")


def _launch(ctx: LaunchContext, interface: str = "wsgi") -> list[Command]:
    argv = [
        ctx.env_bin("granian"),
        "--interface",
        interface,
        "--host",
        ctx.host,
        "--port",
        str(ctx.port),
        "--workers",
        str(ctx.workers),
        "--backlog",
        str(ctx.backlog),
        "--no-access-log",  # the default today; explicit so an upgrade cannot turn it on
        "--log-level",
        "warning",
        "--working-dir",
        str(ctx.app_cwd),
    ]
    if interface in ("asgi", "rsgi"):  # named: "auto" takes uvloop when installed (not here)
        argv += ["--loop", "asyncio"]
    if ctx.threads_set:
        argv += ["--blocking-threads", str(ctx.threads)]
    if ctx.runtime_mode:
        argv += ["--runtime-mode", ctx.runtime_mode]
    return [Command([*argv, ctx.app_ref])]


def _launch_asgi(ctx: LaunchContext) -> list[Command]:
    return _launch(ctx, "asgi")


def _launch_rsgi(ctx: LaunchContext) -> list[Command]:
    return _launch(ctx, "rsgi")


# TLS: granian's own --ssl-* options (ALPN offers h2 and HTTP/1.1 with --http auto).
_TLS = ("--ssl-certificate", "{cert}", "--ssl-keyfile", "{key}")

RECIPES = [
    ServerRecipe(
        name="granian",
        tls_args=_TLS,
        takes_threads=True,
        project="Granian",
        flavour=Flavour.NATIVE,
        runtime_modes=MODES,
        env=ENV,
        version_of="granian",
        launch=_launch,
        handles=("--backlog passed (default 1024)", "--no-access-log"),
        summary="Rust HTTP core (tokio), WSGI calls on blocking threads, worker processes",
    ),
    ServerRecipe(
        name="granian-asgi",
        tls_args=_TLS,
        project="Granian",
        flavour=Flavour.NATIVE,
        runtime_modes=MODES,
        interface=Interface.ASGI,
        env=ENV,
        version_of="granian",
        launch=_launch_asgi,
        expects=(("loop", "asyncio"),),
        handles=(
            "--interface asgi (its default is RSGI)",
            "--loop asyncio named",
            "--backlog passed (default 1024)",
            "--no-access-log",
        ),
        summary="Rust HTTP core (tokio), the ASGI app on an asyncio loop, worker processes",
    ),
    ServerRecipe(
        name="granian-rsgi",
        tls_args=_TLS,
        project="Granian",
        flavour=Flavour.NATIVE,
        runtime_modes=MODES,
        interface=Interface.NATIVE,
        native_api="RSGI",
        env=ENV,
        version_of="granian",
        launch=_launch_rsgi,
        expects=(("loop", "asyncio"),),
        handles=(
            "--interface rsgi named (its default, explicit so a change of default cannot move it)",
            "--loop asyncio named",
            "--backlog passed (default 1024)",
            "--no-access-log",
        ),
        summary="Rust HTTP core (tokio), the app in RSGI (Granian's own interface) on asyncio",
    ),
]
