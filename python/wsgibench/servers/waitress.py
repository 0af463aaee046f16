"""waitress: pure-Python, an I/O thread with a pool of worker threads."""

from ._recipe import Command, Flavour, LaunchContext, PythonEnv, ServerRecipe

ENV = PythonEnv("waitress", ("waitress==3.0.2",))


def _launch(ctx: LaunchContext) -> list[Command]:
    return [Command(ctx.launcher("serve_waitress"))]


RECIPES = [
    ServerRecipe(
        name="waitress", project="waitress", flavour=Flavour.PROCESS, env=ENV,
        version_of="waitress", launch=_launch, multi_worker=False,
        handles=("backlog passed (default 1024)", "'Task queue depth' warnings silenced"),
        summary="asyncore-style I/O thread plus 4 worker threads (or --threads), one process",
    ),
]
