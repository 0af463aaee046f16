"""Daphne: Django Channels' ASGI server, HTTP from Twisted on its asyncio reactor, one process;
TLS through a Twisted `ssl:` endpoint, HTTP/2 over it by ALPN (Twisted's http2 extra)."""

from wsgibench.servers.recipe import (
    Command,
    Flavour,
    Interface,
    LaunchContext,
    PythonEnv,
    ServerRecipe,
)

# h2 and priority: Twisted's `http2` extra, which Daphne's docs ask for; with them Twisted offers
# h2 by ALPN on a TLS endpoint (it speaks no h2c).
ENV = PythonEnv("daphne", ("daphne==4.2.3", "h2==4.4.1", "priority==1.3.0"))


def _escaped(path: object) -> str:
    """A value in a Twisted endpoint string: backslashes, colons and equals signs escaped."""
    return str(path).replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")


def _launch(ctx: LaunchContext) -> list[Command]:
    # A Twisted endpoint string: its command line has no backlog option, the endpoint has one
    # (Twisted's own default is 50).
    endpoint = f"tcp:port={ctx.port}:interface={ctx.host}:backlog={ctx.backlog}"
    if ctx.tls_cert is not None:  # Twisted's TLS endpoint takes the same options, and the files
        endpoint = (
            f"ssl:port={ctx.port}:interface={ctx.host}:backlog={ctx.backlog}"
            f":privateKey={_escaped(ctx.tls_key)}:certKey={_escaped(ctx.tls_cert)}"
        )
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
        tls_args=(),  # the endpoint string carries the certificate (see _launch)
        multi_worker=False,
        lifespan=False,  # no ASGI lifespan: an app's start-up never runs (read back: 4.2.3)
        expects=(("loop", "asyncio"), ("reactor", "asyncio")),
        handles=(
            "--verbosity 0: no access log (verbosity 1, its default, logs every request)",
            "backlog passed in the endpoint string (-e tcp:...:backlog=N; Twisted's default 50)",
            "keep-alive: HTTP/1.1 connections stay open, no limit of requests per connection",
            "Twisted's asyncio reactor installed by daphne: reactor read back from the stack",
            "TLS: -e ssl:...:privateKey=...:certKey=... (Twisted's endpoint); h2 by ALPN with "
            "Twisted's http2 extra (h2, priority) installed",
        ),
        summary="ASGI on Twisted's HTTP (asyncio reactor), one process",
    ),
]
