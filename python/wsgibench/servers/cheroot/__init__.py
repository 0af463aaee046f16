"""cheroot: CherryPy's thread-pool HTTP server, used on its own."""

from wsgibench.servers.recipe import (
    Flavour,
    LaunchContext,
    PythonEnv,
    ServerRecipe,
    here,
    launch_script,
)

# Shared with the cherrypy entry (cherrypy 18.10 runs on this cheroot).
ENV = PythonEnv("cherrypy", ("cherrypy==18.10.0", "cheroot==11.1.2"))


def deploy(ctx: LaunchContext) -> list[str]:
    """cheroot's own command line with the launcher's settings."""
    threads = ctx.threads if ctx.threads_set else 10
    return [
        "cheroot",
        f"--bind={ctx.host}:{ctx.port}",
        f"--threads={threads}",
        f"--request-queue-size={ctx.backlog}",
        ctx.app_ref,
    ]


RECIPES = [
    ServerRecipe(
        name="cheroot",
        takes_threads=True,
        project="cheroot",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="cheroot",
        launch=launch_script(here(__file__)),
        deploy=deploy,
        multi_worker=False,
        handles=("request_queue_size = backlog (default 5)",),
        summary="thread pool (10 threads, or --threads), one process",
    ),
]
