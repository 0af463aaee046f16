"""Paste's httpserver: http.server with a thread pool."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

ENV = PythonEnv("paste", ("paste==3.10.1",))


RECIPES = [
    ServerRecipe(
        name="paste",
        project="Paste",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="paste",
        launch=launch_script(here(__file__)),
        multi_worker=False,
        handles=(
            "request_queue_size = backlog (default 5)",
            "protocol_version HTTP/1.1 (keep-alive; HTTP/1.0 by default)",
            "TCP_NODELAY on the listen socket (40 ms per keep-alive reply otherwise)",
        ),
        summary="http.server-based, thread pool (10 threads, or --threads), one process",
    ),
]
