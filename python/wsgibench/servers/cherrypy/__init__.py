"""CherryPy: the app grafted onto CherryPy's tree and served by its engine (cheroot)."""

from wsgibench.servers.cheroot import ENV
from wsgibench.servers.recipe import Flavour, ServerRecipe, here, launch_script

RECIPES = [
    ServerRecipe(
        name="cherrypy",
        project="CherryPy",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="cherrypy",
        launch=launch_script(here(__file__)),
        multi_worker=False,
        handles=(
            "server.socket_queue_size = backlog (default 5)",
            "production environment: no autoreload, no screen or access log",
        ),
        summary="CherryPy engine over cheroot, thread pool (10 threads, or --threads), one process",
    ),
]
