"""Tornado's HTTPServer with WSGIContainer: the app runs on the IOLoop thread."""

from ._recipe import Flavour, launch_script, PythonEnv, ServerRecipe

ENV = PythonEnv("tornado", ("tornado==6.6.1",))


RECIPES = [
    ServerRecipe(
        name="tornado-wsgi", project="Tornado", flavour=Flavour.CALLBACK, env=ENV,
        version_of="tornado", launch=launch_script("serve_tornado"),
        handles=("tornado.access logger disabled (WSGIContainer logs each request)",
                 "workers > 1 via tornado.process.fork_processes"),
        summary="HTTPServer + WSGIContainer; a blocking app blocks the IOLoop",
    ),
]
