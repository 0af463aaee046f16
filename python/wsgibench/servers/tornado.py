"""Tornado's HTTPServer with WSGIContainer: the app runs on the IOLoop thread."""

from ._recipe import Command, Flavour, LaunchContext, PythonEnv, ServerRecipe

ENV = PythonEnv("tornado", ("tornado==6.6.1",))


def _launch(ctx: LaunchContext) -> list[Command]:
    return [Command(ctx.launcher("serve_tornado"))]


RECIPES = [
    ServerRecipe(
        name="tornado-wsgi", project="Tornado", flavour=Flavour.CALLBACK, env=ENV,
        version_of="tornado", launch=_launch,
        handles=("tornado.access logger disabled (WSGIContainer logs each request)",
                 "workers > 1 via tornado.process.fork_processes"),
        summary="HTTPServer + WSGIContainer; a blocking app blocks the IOLoop",
    ),
]
