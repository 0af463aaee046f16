"""wsgiref.simple_server: the standard library's reference server."""

from ._recipe import Command, Flavour, LaunchContext, PythonEnv, ServerRecipe

# Nothing to install: a bare venv of the interpreter.
ENV = PythonEnv("stdlib", ())


def _launch(ctx: LaunchContext) -> list[Command]:
    return [Command(ctx.launcher("serve_wsgiref"))]


RECIPES = [
    ServerRecipe(
        name="wsgiref", project="wsgiref", flavour=Flavour.PROCESS, env=ENV,
        launch=_launch, multi_worker=False,
        handles=("request_queue_size = backlog (default 5)", "log_message silenced"),
        summary="standard library, HTTP/1.0, one request at a time, closes every connection",
    ),
]
