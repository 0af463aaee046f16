"""mod_wsgi-express: Apache (event MPM) with mod_wsgi daemon processes, configured in the workdir."""

from wsgibench.servers.recipe import (
    Binary,
    Command,
    Flavour,
    LaunchContext,
    PythonEnv,
    ServerRecipe,
)

# mod_wsgi links against libpython: built from Debian's /usr/bin/python3 and its headers.
APACHE = Binary("apache2", stored_as="apache_version")
ENV = PythonEnv("mod_wsgi", ("mod-wsgi==6.1.1",), system_python=True)
# Apache refuses to run its children as root; Debian's apache2 package creates www-data.
USER = "www-data"


def _launch(ctx: LaunchContext) -> list[Command]:
    argv = [
        ctx.env_bin("mod_wsgi-express"),
        "start-server",
        "--application-type",
        "module",
        ctx.app,
        "--callable-object",
        ctx.callable,
        "--python-path",
        str(ctx.app_dir),
        # The app's own dependencies (its requirements), after its folder.
        *[arg for path in ctx.app_path for arg in ("--python-path", str(path))],
        "--working-directory",
        str(ctx.app_cwd),
        "--host",
        ctx.host,
        "--port",
        str(ctx.port),
        "--server-root",
        str(ctx.workdir / "apache"),
        "--user",
        USER,
        "--group",
        USER,
        "--processes",
        str(ctx.workers),
        "--server-backlog",
        str(ctx.backlog),  # Apache's ListenBacklog
        "--daemon-backlog",
        str(ctx.backlog),  # Apache -> daemon process socket (default 100)
        # The default en_US.UTF-8 is not generated on Debian images: a warning on every start.
        "--locale",
        "C.UTF-8",
        "--log-to-terminal",  # errors to our log; no --access-log: none is written
    ]
    if ctx.threads_set:
        argv += ["--threads", str(ctx.threads)]
    return [Command(argv)]


RECIPES = [
    ServerRecipe(
        name="mod-wsgi",
        takes_threads=True,
        project="mod_wsgi",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="mod-wsgi",
        binaries=(APACHE,),
        system_packages=("apache2", "apache2-dev", "python3-dev", "python3-venv"),
        launch=_launch,
        start_timeout_s=40.0,
        handles=(
            "venv from /usr/bin/python3 (mod_wsgi links libpython)",
            "children run as www-data (Apache refuses root)",
            "server and daemon backlogs passed",
            "no access log",
        ),
        summary="Apache event MPM in front of mod_wsgi daemon processes (5 threads, or --threads)",
    ),
]
