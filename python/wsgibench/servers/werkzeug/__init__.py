"""Werkzeug's development server (what run_simple starts), threaded."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

ENV = PythonEnv("werkzeug", ("werkzeug==3.1.9",))


RECIPES = [
    ServerRecipe(
        name="werkzeug",
        project="Werkzeug",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="werkzeug",
        launch=launch_script(here(__file__)),
        multi_worker=False,
        handles=(
            "werkzeug logger disabled (one line per request)",
            "listen socket passed as fd: backlog (default 128) and TCP_NODELAY",
        ),
        summary="development server, thread per connection; Connection: close on every reply, "
        "and a client that sends a second request anyway stalls in its drain loop",
    ),
]
