"""wsgiref.simple_server: the standard library's reference server."""

from ._recipe import Flavour, launch_script, PythonEnv, ServerRecipe

# Nothing to install: a bare venv of the interpreter.
ENV = PythonEnv("stdlib", ())


RECIPES = [
    ServerRecipe(
        name="wsgiref", project="wsgiref", flavour=Flavour.PROCESS, env=ENV,
        launch=launch_script("serve_wsgiref"), multi_worker=False,
        handles=("request_queue_size = backlog (default 5)", "log_message silenced"),
        summary="standard library, HTTP/1.0, one request at a time, closes every connection",
    ),
]
