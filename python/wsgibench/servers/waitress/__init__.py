"""waitress: pure-Python, an I/O thread with a pool of worker threads."""

from wsgibench.servers.recipe import (
    Flavour,
    LaunchContext,
    PythonEnv,
    ServerRecipe,
    here,
    launch_script,
)

ENV = PythonEnv("waitress", ("waitress==3.0.2",))


def deploy(ctx: LaunchContext) -> list[str]:
    """waitress-serve with the launcher's settings (its queue-depth warnings stay on)."""
    threads = ctx.threads if ctx.threads_set else 4
    return [
        "waitress-serve",
        f"--host={ctx.host}",
        f"--port={ctx.port}",
        f"--threads={threads}",
        f"--backlog={ctx.backlog}",
        "--connection-limit=100000",
        ctx.app_ref,
    ]


RECIPES = [
    ServerRecipe(
        name="waitress",
        takes_threads=True,
        project="waitress",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="waitress",
        launch=launch_script(here(__file__)),
        deploy=deploy,
        multi_worker=False,
        handles=("backlog passed (default 1024)", "'Task queue depth' warnings silenced"),
        summary="asyncore-style I/O thread plus 4 worker threads (or --threads), one process",
    ),
]
