"""wsgiref.simple_server: the standard library's reference server."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

# Nothing to install: a bare venv of the interpreter.
ENV = PythonEnv("stdlib", ())


RECIPES = [
    ServerRecipe(
        name="wsgiref",
        project="wsgiref",
        flavour=Flavour.PROCESS,
        env=ENV,
        launch=launch_script(here(__file__)),
        multi_worker=False,
        handles=("request_queue_size = backlog (default 5)", "log_message silenced"),
        summary="standard library, HTTP/1.0, one request at a time, closes every connection",
    ),
]
