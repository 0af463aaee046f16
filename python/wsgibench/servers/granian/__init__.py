"""Granian: a Rust (hyper/tokio) HTTP server calling the WSGI app through its blocking threads."""

from wsgibench.servers.recipe import Command, Flavour, LaunchContext, PythonEnv, ServerRecipe

ENV = PythonEnv("granian", ("granian==2.8.7",))


def _launch(ctx: LaunchContext) -> list[Command]:
    argv = [
        ctx.env_bin("granian"),
        "--interface",
        "wsgi",
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
        str(ctx.app_dir),
    ]
    if ctx.threads > 1:
        argv += ["--blocking-threads", str(ctx.threads)]
    return [Command([*argv, f"{ctx.app}:app"])]


RECIPES = [
    ServerRecipe(
        name="granian",
        project="Granian",
        flavour=Flavour.NATIVE,
        env=ENV,
        version_of="granian",
        launch=_launch,
        handles=("--backlog passed (default 1024)", "--no-access-log"),
        summary="Rust HTTP core (tokio), WSGI calls on blocking threads, worker processes",
    ),
]
