"""Daphne: Django Channels' ASGI server, HTTP from Twisted on its asyncio reactor, one process."""

from wsgibench.servers.recipe import (
    Command,
    Flavour,
    Interface,
    LaunchContext,
    PythonEnv,
    ServerRecipe,
)

ENV = PythonEnv("daphne", ("daphne==4.2.3",))


def _launch(ctx: LaunchContext) -> list[Command]:
    # A Twisted endpoint string: its command line has no backlog option, the endpoint has one
    # (Twisted's own default is 50).
    endpoint = f"tcp:port={ctx.port}:interface={ctx.host}:backlog={ctx.backlog}"
    argv = [
        ctx.env_bin("daphne"),
        "-e",
        endpoint,
        # Verbosity 0: no access log on stdout (verbosity 1, its default, logs every request).
        "--verbosity",
        "0",
        *(["--access-log", "-"] if ctx.access_log else []),
        ctx.app_ref,
    ]
    # daphne imports the app from its working directory.
    return [Command(argv, cwd=ctx.app_cwd, pythonpath=(str(ctx.app_dir),))]


RECIPES = [
    ServerRecipe(
        name="daphne",
        project="Daphne",
        flavour=Flavour.CALLBACK,
        interface=Interface.ASGI,
        env=ENV,
        version_of="daphne",
        launch=_launch,
        multi_worker=False,
        expects=(("loop", "asyncio"), ("reactor", "asyncio")),
        handles=(
            "--verbosity 0: no access log (verbosity 1, its default, logs every request)",
            "backlog passed in the endpoint string (-e tcp:...:backlog=N; Twisted's default 50)",
            "keep-alive: HTTP/1.1 connections stay open, no limit of requests per connection",
            "Twisted's asyncio reactor installed by daphne: reactor read back from the stack",
        ),
        summary="ASGI on Twisted's HTTP (asyncio reactor), one process",
    ),
]
